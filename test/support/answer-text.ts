/**
 * The answer's text a client got from a chat, Messages or Responses call: a JSON body's, or a
 * stream's text deltas joined (Responses' `.done` events repeat it: only its deltas are read).
 */
export type AnswerSurface = 'chat' | 'messages' | 'responses'

export function answerText(surface: AnswerSurface, body: string, stream: boolean): string {
  if (!stream) {
    const b = JSON.parse(body)
    if (surface === 'chat') return b.choices[0].message.content ?? ''
    if (surface === 'messages') return b.content.map((c: any) => c.text ?? '').join('')
    return b.output
      .flatMap((o: any) => o.content ?? [])
      .map((c: any) => c.text ?? '')
      .join('')
  }
  let text = ''
  for (const line of body.split('\n')) {
    if (!line.startsWith('data: {')) continue
    const e = JSON.parse(line.slice(6))
    if (surface === 'chat') text += e.choices?.[0]?.delta?.content ?? ''
    else if (surface === 'messages') text += e.type === 'content_block_delta' ? (e.delta.text ?? '') : ''
    else text += e.type === 'response.output_text.delta' ? e.delta : ''
  }
  return text
}
