/**
 * Issue 47: the documents stay a README a newcomer reads (at most 250 lines) that links every page
 * of `docs/`, and every shell command they show is run. The commands are read from every document
 * (README.md, BENCHMARKS.md, docs/**): each line of a fenced `sh`/`bash`/`shell`/`console` block
 * (continuation lines joined, comments cut) and each `$ ` line outside them. Each must be listed
 * below with what runs it: a test (or the CI script) that names it, as the `needle` it must contain,
 * or — a short, reviewed list — why nothing can (root, a container, minutes of load). A command
 * added to a document without an entry fails here, and so does an entry no document shows any more.
 */
import { describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { REPO } from '../support/cli.ts'
import { commandLines, doc, docPaths } from '../support/docs.ts'

/** A command's key: its text with runs of white space as one space. */
const key = (command: string) => command.replace(/\s+/g, ' ').trim()

const README_COMMANDS = 'test/e2e/docs/readme-commands.test.ts'
const REPLICAS = 'test/e2e/docs/docs-replicas.test.ts'
const AGENTS = 'test/e2e/docs/agents-commands.test.ts'
const AGENT_BLOCKS = 'test/e2e/clients/qwen-opencode.test.ts'
const DOC_COMMANDS = '.ci/doc-commands.sh'

/** Commands a test runs: `by` (a path from the repository root) contains `needle`. */
const RUN_BY: Record<string, { by: string; needle: string }> = {
  // README: the quick start.
  'npm install && npm start': { by: README_COMMANDS, needle: "npmStart('npm install && npm start')" },
  'npm install && npm test': { by: '.ci/run', needle: 'npm test -- --update-timings 2>&1' },
  'npx bun src/main.ts accounts create alice --plan dev --config switchyard.example.yaml': {
    by: README_COMMANDS,
    needle: "shBlock('make an account and a key')",
  },
  'npx bun src/main.ts keys create alice --config switchyard.example.yaml': {
    by: README_COMMANDS,
    needle: "shBlock('make an account and a key')",
  },
  'curl http://127.0.0.1:8080/v1/chat/completions -H "Authorization: Bearer sk-sy-…" -H "Content-Type: application/json" -d \'{"model": "demo/echo", "messages": [{"role": "user", "content": "hello"}]}\'':
    { by: README_COMMANDS, needle: 'quickCurl = rest' },
  // README: Claude Code (skipped, saying so, without the test-client package).
  'export ANTHROPIC_BASE_URL=http://127.0.0.1:8080': { by: README_COMMANDS, needle: 'ANTHROPIC_BASE_URL' },
  'export ANTHROPIC_AUTH_TOKEN=sk-sy-...': { by: README_COMMANDS, needle: 'ANTHROPIC_AUTH_TOKEN' },
  'export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1': {
    by: README_COMMANDS,
    needle: 'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
  },
  'claude --model demo/agent': { by: README_COMMANDS, needle: '/^claude --model (\\S+)/m' },
  // docs/agents.md: Gemini CLI (skipped, saying so, without the test-client package).
  'export GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8080': {
    by: 'test/e2e/surfaces/gemini/gemini-cli.test.ts',
    needle: "'GOOGLE_GEMINI_BASE_URL', 'GEMINI_API_KEY'",
  },
  'export GEMINI_API_KEY=sk-sy-...': {
    by: 'test/e2e/surfaces/gemini/gemini-cli.test.ts',
    needle: "'GOOGLE_GEMINI_BASE_URL', 'GEMINI_API_KEY'",
  },
  'gemini -m demo/agent': { by: 'test/e2e/surfaces/gemini/gemini-cli.test.ts', needle: 'gemini -m (' },
  // docs/agents.md: Qwen Code and opencode, each block run as pasted (skipped, saying so, without the test-client package).
  ...Object.fromEntries(
    [
      'export OPENAI_BASE_URL=http://127.0.0.1:8080/v1',
      'export OPENAI_API_KEY=sk-sy-...',
      'export OPENAI_MODEL=demo/agent',
      'export QWEN_CODE_MAX_OUTPUT_TOKENS=64000',
      'export QWEN_USAGE_STATISTICS_ENABLED=false',
      'qwen',
    ].map((c) => [c, { by: AGENT_BLOCKS, needle: "agentsBlock('Qwen Code', 'sh')" }]),
  ),
  ...Object.fromEntries(
    [
      'export SWITCHYARD_API_KEY=sk-sy-...',
      'export OPENCODE_DISABLE_MODELS_FETCH=1',
      'export OPENCODE_DISABLE_AUTOUPDATE=1',
      'export npm_config_offline=true',
      'opencode',
    ].map((c) => [c, { by: AGENT_BLOCKS, needle: "agentsBlock('opencode', 'sh')" }]),
  ),
  // docs/install.md: the binary's block, from `init` on; with Bun installed.
  'switchyard init': { by: README_COMMANDS, needle: "shBlock('## From the binary')" },
  'switchyard accounts create alice --plan dev && switchyard keys create alice': {
    by: README_COMMANDS,
    needle: "shBlock('## From the binary')",
  },
  'switchyard serve': { by: README_COMMANDS, needle: "shBlock('## From the binary')" },
  'bun run build': { by: '.ci/run', needle: 'npm run -s build' },
  './dist/switchyard serve --config switchyard.example.yaml': {
    by: 'scripts/smoke-binary.sh',
    needle: './switchyard serve',
  },
  // docs/tokens-and-money.md: per-key limits.
  'switchyard accounts create acme --plan pro': {
    by: README_COMMANDS,
    needle: "shBlock('## Per-key limits')",
  },
  'switchyard keys create acme --name ci --tpm 20000 --budget-usd 5 --budget-period day --models demo/echo,demo/echo-pro':
    { by: README_COMMANDS, needle: "shBlock('## Per-key limits')" },
  'switchyard keys list acme': { by: README_COMMANDS, needle: "shBlock('## Per-key limits')" },
  'switchyard keys set-limits KEY_ID --tpm 50000 --rpm 5': {
    by: README_COMMANDS,
    needle: "shBlock('## Per-key limits')",
  },
  'switchyard keys set-limits KEY_ID --tpm none --models none': {
    by: README_COMMANDS,
    needle: "shBlock('## Per-key limits')",
  },
  'curl -X PATCH http://127.0.0.1:8080/admin/v1/keys/KEY_ID/limits -H "authorization: Bearer $SWITCHYARD_ADMIN_TOKEN" -H \'content-type: application/json\' -d \'{"tpm": 20000, "budget": {"usd": 5, "period": "day"}, "models": ["demo/echo"]}\'':
    { by: README_COMMANDS, needle: "shBlock('changes them with JSON merge semantics')" },
  // docs/replicas.md: two replicas on one PostgreSQL and one Redis.
  'createdb switchyard': { by: REPLICAS, needle: "shBlock('Two replicas on one PostgreSQL')" },
  'switchyard migrate --config switchyard.yaml': {
    by: REPLICAS,
    needle: "shBlock('Two replicas on one PostgreSQL')",
  },
  'switchyard accounts create alice --plan free --config switchyard.yaml': {
    by: REPLICAS,
    needle: "shBlock('Two replicas on one PostgreSQL')",
  },
  'switchyard keys create alice --config switchyard.yaml': {
    by: REPLICAS,
    needle: "shBlock('Two replicas on one PostgreSQL')",
  },
  'switchyard serve --config switchyard.yaml --port 8081 &': {
    by: REPLICAS,
    needle: "shBlock('Two replicas on one PostgreSQL')",
  },
  'switchyard serve --config switchyard.yaml --port 8082 &': {
    by: REPLICAS,
    needle: "shBlock('Two replicas on one PostgreSQL')",
  },
  // docs/traces.md: the Langfuse exports.
  'export OTEL_EXPORTER_OTLP_ENDPOINT=https://cloud.langfuse.com/api/public/otel': {
    by: README_COMMANDS,
    needle: "shBlock('**Langfuse**')",
  },
  'export OTEL_EXPORTER_OTLP_HEADERS="Authorization=Basic%20$(printf \'%s\' "$LANGFUSE_PUBLIC_KEY:$LANGFUSE_SECRET_KEY" | base64 -w0)"':
    { by: README_COMMANDS, needle: "shBlock('**Langfuse**')" },
  'OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 switchyard serve': {
    by: README_COMMANDS,
    needle: "shBlock('**A local collector**')",
  },
  // docs/agents.md: Claude Code's window, and the budget refusing offline.
  'export CLAUDE_CODE_MAX_CONTEXT_TOKENS=200000': { by: AGENTS, needle: "blockAfter('### Claude Code'" },
  ...Object.fromEntries(
    [
      'switchyard accounts create newcomer --config budget.yaml',
      'KEY=$(switchyard keys create newcomer --config budget.yaml | head -n 1)',
      'switchyard serve --config budget.yaml &',
      'until curl -sf http://127.0.0.1:8080/healthz > /dev/null; do sleep 0.2; done',
      `for i in 1 2 3 4; do curl -s -o /dev/null -w '%{http_code} ' http://127.0.0.1:8080/v1/chat/completions -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" -d '{"model": "demo/priced", "max_tokens": 10, "messages": [{"role": "user", "content": "hello"}]}'; done`,
      `curl -s http://127.0.0.1:8080/v1/chat/completions -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" -d '{"model": "demo/priced", "max_tokens": 10, "messages": [{"role": "user", "content": "hello"}]}'`,
      'kill $!',
    ].map((c) => [c, { by: AGENTS, needle: "blockAfter('In the folder that holds it'" }]),
  ),
  // What needs the network, root or minutes of load: CI runs it as pasted after the build
  // (.ci/doc-commands.sh; the benches at a smoke size, the test script on one folder).
  'bun install --no-save && bun run start': {
    by: DOC_COMMANDS,
    needle: "'bun install --no-save && bun run start'",
  },
  'bun install --no-save && bun run test': {
    by: DOC_COMMANDS,
    needle: "doc 'bun install --no-save && bun run test",
  },
  'npm install && npm run build && sudo install -m 755 dist/switchyard /usr/local/bin/switchyard': {
    by: DOC_COMMANDS,
    needle:
      "doc 'npm install && npm run build && sudo install -m 755 dist/switchyard /usr/local/bin/switchyard'",
  },
  'bun test/support/otlp-collector.ts 4318': {
    by: README_COMMANDS,
    needle: "shBlock('**A local collector**')",
  },
  ...Object.fromEntries(
    [
      '',
      ' --quick',
      ' --binary',
      ' --soak 10',
      ' --waterfall',
      ' --hostile',
      ' --signals',
      ' --aliases',
      ' --c1',
      ' --gemini',
    ].map((a) => [
      `bun run bench${a}`,
      { by: DOC_COMMANDS, needle: a ? `'${a.trim()}'` : "for args in '' " },
    ]),
  ),
  ...Object.fromEntries(
    [
      'apt-get download caddy && dpkg -x caddy_*.deb /tmp/caddy',
      'mkdir -p /tmp/base && git archive main src package.json switchyard.example.yaml | tar -x -C /tmp/base',
      'ln -s "$PWD/node_modules" /tmp/base/node_modules',
      'CADDY=/tmp/caddy/usr/bin/caddy bun run bench --c1 --baseline /tmp/base',
    ].map((c) => [c, { by: DOC_COMMANDS, needle: `doc '${c}'` }]),
  ),
}

/** Commands no test runs, and why. Reviewed: add one only with a reason a test cannot do it. */
const NOT_RUN: Record<string, string> = {}

/** Every command shown: `{ path, command }` per occurrence. */
function shownCommands(): Array<{ path: string; command: string }> {
  const out: Array<{ path: string; command: string }> = []
  for (const path of docPaths()) {
    let text = doc(path)
    for (const m of text.matchAll(/^```(?:sh|bash|shell|console|zsh)\n([\s\S]*?)^```/gm)) {
      for (const line of commandLines(m[1]!)) out.push({ path, command: key(line.replace(/^\$ /, '')) })
    }
    text = text.replace(/^```[\s\S]*?^```/gm, '')
    for (const m of text.matchAll(/^\s*\$ (.+)$/gm)) out.push({ path, command: key(m[1]!) })
  }
  return out
}

describe("the documents' commands", () => {
  const shown = shownCommands()

  test('are found in the documents (the scan reads the blocks)', () => {
    expect(shown.length).toBeGreaterThan(30)
    expect(shown.map((s) => s.path)).toContain('README.md')
  })

  test('each is run by a test, or listed with why none can', () => {
    const unlisted = shown.filter((s) => !(s.command in RUN_BY) && !(s.command in NOT_RUN))
    expect(unlisted.map((s) => `${s.path}: ${s.command}`)).toEqual([])
  })

  test('no entry outlives its command', () => {
    const all = new Set(shown.map((s) => s.command))
    const stale = [...Object.keys(RUN_BY), ...Object.keys(NOT_RUN)].filter((c) => !all.has(c))
    expect(stale).toEqual([])
  })

  test('what runs each names it', () => {
    const wrong = Object.entries(RUN_BY)
      .filter(
        ([, r]) =>
          !existsSync(join(REPO, r.by)) || !readFileSync(join(REPO, r.by), 'utf8').includes(r.needle),
      )
      .map(([c, r]) => `${c} → ${r.by} lacks ${r.needle}`)
    expect(wrong).toEqual([])
  })
})

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-')

/** The anchors a page's headings give. */
function anchors(path: string): Set<string> {
  const text = doc(path).replace(/^```[\s\S]*?^```/gm, '')
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!.trim())))
}

/** Relative links of a page (`[text](target)`, images too), outside code. */
function links(path: string): string[] {
  const text = doc(path).replace(/^```[\s\S]*?^```/gm, '')
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/.test(t))
}

describe('the documents', () => {
  test('the README is at most 250 lines', () => {
    expect(doc('README.md').split('\n').length).toBeLessThanOrEqual(250)
  })

  test('the README links every page of docs/', () => {
    const linked = new Set(links('README.md').map((t) => t.split('#')[0]))
    const pages = docPaths().filter((p) => p.startsWith('docs/'))
    expect(pages.length).toBeGreaterThan(10)
    expect(pages.filter((p) => !linked.has(p))).toEqual([])
  })

  test('every relative link reaches a file, and its anchor a heading there', () => {
    const broken: string[] = []
    for (const path of docPaths()) {
      for (const target of links(path)) {
        const [file, anchor] = target.split('#') as [string, string | undefined]
        const to = file ? normalize(join(dirname(path), file)) : path
        if (!existsSync(join(REPO, to))) broken.push(`${path}: ${target}`)
        else if (anchor && to.endsWith('.md') && !anchors(to).has(anchor)) broken.push(`${path}: ${target}`)
      }
    }
    expect(broken).toEqual([])
  })
})
