// Benchmark-only DSH plugin: times the whole agent/pre-step chain of every step.
// Prepended, so its `next()` runs every other pre-step listener (ours included).
import { appendFileSync } from 'node:fs'

export const name = 'lcm-bench-timing'

export function apply(ctx, config) {
  ctx.on(
    'agent/pre-step',
    async (payload, next) => {
      const start = process.hrtime.bigint()
      const decision = await next()
      const ns = Number(process.hrtime.bigint() - start)
      appendFileSync(config.out, JSON.stringify({ turn: payload.turn, step: payload.step, ns }) + '\n')
      return decision
    },
    { prepend: true },
  )
}
