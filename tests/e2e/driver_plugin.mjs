// A test-only DSH plugin: after a given turn ends, run one slash command the way a UI
// would (ctx.commands.execute) and write the result to a file for the test to read.
import { writeFileSync } from 'node:fs'

export const name = 'lcm-e2e-driver'
export const inject = ['commands']

export function apply(ctx, config) {
  const agents = new Map()
  ctx.on('agent/pre-step', async (payload, next) => {
    agents.set(payload.agent?.session?.id, payload.agent)
    return next()
  })
  ctx.on('session/event', (session, event) => {
    if (event?.type !== 'turn/end' || event?.data?.turn !== config.afterTurn) return
    const agent = agents.get(session.id)
    setTimeout(async () => {
      let outcome
      try {
        const execution = await ctx.commands.execute(agent, config.command, [], AbortSignal.timeout(20000))
        outcome = { result: execution?.result ?? null }
      } catch (error) {
        outcome = { error: String(error?.stack ?? error) }
      }
      writeFileSync(config.out, JSON.stringify(outcome))
    }, 0)
  })
}
