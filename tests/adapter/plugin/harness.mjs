// Drives plugin.mjs with a stand-in for the DSH plugin context, no DSH needed.
// Usage: node harness.mjs PLUGIN CONFIG_JSON SCRIPT_JSON; prints one JSON line per result.
import { readFileSync } from 'node:fs'

const [pluginPath, configJson, scriptPath] = process.argv.slice(2)
const plugin = await import(pluginPath)
const listeners = new Map()
const disposers = []
const commands = new Map()
const services = {} // what `ctx.get(name)` finds: stand-ins set by a `host` step
let modelLookups = 0
const ctx = {
  get(name) {
    return services[name]
  },
  on(name, fn) {
    listeners.set(name, fn)
  },
  effect(fn) {
    disposers.push(fn())
  },
  plugin(sub) {
    sub.apply({ commands: { register: (def) => commands.set(def.name, def) } })
  },
}
plugin.apply(ctx, JSON.parse(configJson))
const out = (value) => process.stdout.write(JSON.stringify(value) + '\n')
const session = { id: 'plugin-会话', events: [], surface: { nodes: [] } }
const agent = { id: session.id, session }

let unloaded = false
for (const step of JSON.parse(readFileSync(scriptPath, 'utf8'))) {
  if (step.op === 'event') {
    session.events.push(step.event)
    if (step.event.surfaceOp) session.surface.nodes.push(step.event.seq)
    listeners.get('session/event')(session, step.event)
  } else if (step.op === 'host') {
    // DSH's model service, compaction-basic and the request header, as a plugin sees them.
    services.llm = {
      async resolveModelInfo(provider, model) {
        modelLookups += 1
        return { provider, id: model, context: { contextWindow: step.contextWindow }, defaultMaxTokens: step.defaultMaxTokens }
      },
    }
    class BasicCompactionEngine {
      constructor(config) {
        this.config = config
      }
    }
    services.compaction = new BasicCompactionEngine(step.compaction)
    session.requestHeader = () => ({ config: { provider: step.provider, model: step.model } })
  } else if (step.op === 'model-lookups') {
    out({ op: 'model-lookups', count: modelLookups })
  } else if (step.op === 'surface') {
    session.surface.nodes = step.nodes // what a compaction leaves on screen
  } else if (step.op === 'pre-step') {
    const controller = new AbortController()
    if (step.aborted) controller.abort()
    const decision = step.decision ?? { kind: 'enter', messages: step.messages ?? [] }
    const result = await listeners.get('agent/pre-step')(
      { agent, messages: decision.messages ?? [], turn: step.turn, step: step.step, signal: controller.signal },
      async () => decision,
    )
    out({ op: 'pre-step', result })
  } else if (step.op === 'pre-tool') {
    const prior = step.prior ?? { kind: 'allow' }
    const result = await listeners.get('tools/pre-execute')(
      { agent, name: step.tool, arguments: step.args, callId: 'c1', signal: new AbortController().signal },
      async () => prior,
    )
    out({ op: 'pre-tool', result })
  } else if (step.op === 'command') {
    const def = commands.get('memory')
    const result = await def.handler({ agent, rawInput: step.input, attachments: [], signal: AbortSignal.timeout(20000) })
    out({ op: 'command', name: def.name, result })
  } else if (step.op === 'unload') {
    for (const dispose of disposers) dispose()
    unloaded = true
    out({ op: 'unload' })
  } else if (step.op === 'wait-gone') {
    // Poll until the recorded sidecar pid is gone (or give up after the given time).
    const deadline = Date.now() + step.ms
    let alive = true
    while (alive && Date.now() < deadline) {
      try {
        process.kill(step.pid ?? Number(readFileSync(step.pidFile, 'utf8').trim().split('\n').pop()), 0)
        await new Promise((r) => setTimeout(r, 50))
      } catch {
        alive = false
      }
    }
    out({ op: 'wait-gone', gone: !alive })
  }
}
// Never leave a sidecar behind, whatever the script did.
if (!unloaded) for (const dispose of disposers) dispose()
process.exit(0)
