/**
 * How many gateways this test process has started: in-process ones (gateway.ts) and `serve`
 * processes (spawnServe, cliProcess). No imports, so the census (test/setup.ts, SUITE_CPU) can
 * read it in every file at no cost; it adds the counts of each file to the file's line.
 */
export const starts = { gateways: 0, serves: 0 }
