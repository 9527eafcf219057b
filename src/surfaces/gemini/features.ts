/**
 * @module
 * The catalogue features (DESIGN §3, §14) a Gemini request uses, named in Gemini's own terms, for
 * the pipeline's one feature check.
 *
 * | field                                                        | feature         |
 * |--------------------------------------------------------------|-----------------|
 * | `:streamGenerateContent`                                     | streaming       |
 * | `tools`, `functionCall` / `functionResponse` parts            | tools           |
 * | `systemInstruction`                                          | system_messages |
 * | `inlineData` / `fileData` parts                              | vision          |
 * | `thinkingConfig` with a budget above 0 (or -1) or a level     | reasoning       |
 * | `responseJsonSchema` / `responseSchema`                      | json_schema     |
 * | `responseMimeType: application/json`                         | json_mode       |
 * | audio `inlineData` parts                                     | audio_input     |
 * | `candidateCount` above 1                                     | n               |
 */
import { type FeatureUse, featureUse } from '../../catalogue/features.ts'
import type { GenerateContentRequest } from './request-schema.ts'
import { asksReasoning } from './thinking.ts'

const DO_WITHOUT = {
  streaming: 'call :generateContent instead of :streamGenerateContent',
  tools: 'remove tools and the functionCall / functionResponse parts',
  system_messages: 'move the system instruction into the first user turn',
  vision: 'remove the inlineData and fileData parts',
  reasoning: 'remove thinkingConfig or set thinkingBudget to 0',
  json_schema: 'remove the response schema and ask for JSON in the prompt',
  json_mode: 'remove responseMimeType and ask for JSON in the prompt',
  audio_input: 'remove the audio inlineData parts',
  n: 'send candidateCount 1',
} as const

const use = featureUse(DO_WITHOUT)

export function detectGeminiFeatures(req: GenerateContentRequest, stream: boolean): FeatureUse[] {
  const uses: FeatureUse[] = []
  const seen = (feature: string) => uses.some((u) => u.feature === feature)
  if (stream) uses.push(use('streaming', 'streamGenerateContent'))
  if (req.tools?.length) uses.push(use('tools', 'tools'))
  if (req.systemInstruction?.parts.length) uses.push(use('system_messages', 'systemInstruction'))
  const g = req.generationConfig
  if (g?.candidateCount !== undefined && g.candidateCount > 1)
    uses.push(use('n', 'generationConfig.candidateCount'))
  const reasoning = asksReasoning(g?.thinkingConfig)
  if (reasoning) uses.push(use('reasoning', reasoning))
  if (g?.responseJsonSchema !== undefined)
    uses.push(use('json_schema', 'generationConfig.responseJsonSchema'))
  else if (g?.responseSchema !== undefined) uses.push(use('json_schema', 'generationConfig.responseSchema'))
  else if (g?.responseMimeType === 'application/json')
    uses.push(use('json_mode', 'generationConfig.responseMimeType'))
  req.contents.forEach((content, i) => {
    content.parts.forEach((part, j) => {
      const at = `contents[${i}].parts[${j}]`
      if ((part.functionCall || part.functionResponse) && !seen('tools')) uses.push(use('tools', at))
      const audio = part.inlineData?.mimeType.toLowerCase().startsWith('audio/') === true
      if (audio && !seen('audio_input')) uses.push(use('audio_input', at))
      else if (!audio && (part.inlineData || part.fileData) && !seen('vision')) uses.push(use('vision', at))
    })
  })
  return uses
}
