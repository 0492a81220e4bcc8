// long-conversation-memory: a DeepSeek Harness plugin that forwards to a Python sidecar.
//
// Written for this project; it imports only Node built-ins, because a loose plugin file
// cannot import @deepseek-ai/* packages. All memory logic lives in the sidecar
// (`python -m lcm_adapter.dsh.sidecar`, the same thing as `lcm serve`), reached over
// newline-delimited JSON-RPC on its stdio. The rules this file keeps:
//
// - The host never waits on capture: session events are notifications, written in order.
// - The sidecar starts when the plugin loads, off the first turn's path. Pre-step and
//   pre-tool wait at most `deadlineMs`; after that the step goes on without memory and
//   the reason is recorded (here, and in the sidecar's assembly log). The first turn of
//   a new session has no memory yet: by default (`startWaitMs: 0`) it does not wait for
//   the sidecar at all, since any await there lets the host's own start-up work run
//   inside the step; with `startWaitMs > 0` it waits that long for a starting sidecar
//   (worth it only for skills' resident lines on turn 1).
// - A dead sidecar is restarted at most once per turn, then the session's events are
//   replayed to it (capture is idempotent), so memory comes back complete.
// - Nothing here throws into the host; the sidecar is killed when the plugin unloads.

import { spawn } from 'node:child_process'
import { setPriority } from 'node:os'
import { createInterface } from 'node:readline'

export const name = 'long-conversation-memory'

const SOURCE_KIND = 'long-conversation-memory'
const DEFAULT_DEADLINE_MS = 1500
const MIN_DEADLINE_MS = 50
const MAX_DEADLINE_MS = 60000
const DEFAULT_COMMAND_TIMEOUT_MS = 15000
// The most the first tool call waits for a starting sidecar (once per sidecar start).
const TOOL_START_WAIT_MS = 5000
const DEFAULT_START_WAIT_MS = 0
// `niceness` > 0 runs the sidecar at a lower CPU priority than the host. Measured on a
// busy machine: 10 cut what the sidecar's Python start adds to the host's first turn
// (387 -> 186 ms at the median) but tripled what later pre-steps add (9 -> 29 ms), since
// the sidecar then loses the CPU to everything else; so it is off by default.
const DEFAULT_NICENESS = 0
const STDERR_TAIL = 40
const MAX_PENDING_SKIPS = 100

function clampDeadline(value) {
  const n = Number(value)
  if (!Number.isFinite(n)) return DEFAULT_DEADLINE_MS
  return Math.min(MAX_DEADLINE_MS, Math.max(MIN_DEADLINE_MS, Math.round(n)))
}

function sessionIdOf(agent) {
  const id = agent?.session?.id ?? agent?.id
  return typeof id === 'string' && id ? id : undefined
}

const MESSAGE_TYPES = new Set(['user/message', 'assistant/message', 'tool/result'])

// The seqs of the messages the model will see in this step, so the sidecar reads their
// text from its own copy instead of receiving it on every step. By default that is the
// current turn's messages: memory from earlier turns is restated even while the original
// is still far up in the history. With `hideVisible: true` it is the whole visible
// surface, so only what compaction removed comes back.
function visibleSeqs(agent, turn, wholeSurface) {
  try {
    if (wholeSurface) {
      const nodes = agent?.session?.surface?.nodes
      if (nodes && typeof nodes.length === 'number') {
        return Array.from(nodes).filter((n) => Number.isSafeInteger(n))
      }
    }
    const seqs = []
    for (const event of newestFirst(agent?.session)) {
      if (event?.type === 'turn/start' && event?.data?.turn === turn) return seqs.reverse()
      if (MESSAGE_TYPES.has(event?.type) && Number.isSafeInteger(event?.seq)) seqs.push(event.seq)
    }
  } catch {
    // an older host without these fields: the sidecar sees only the step's new messages
  }
  return undefined
}

// The seqs of the messages the host still holds in its history (its surface), so the
// sidecar does not quote them again as raw evidence. Undefined on a host without it.
function surfaceSeqs(agent) {
  try {
    const nodes = agent?.session?.surface?.nodes
    if (nodes && typeof nodes.length === 'number') {
      return Array.from(nodes).filter((n) => Number.isSafeInteger(n))
    }
  } catch {
    // an older host: every raw turn may be quoted
  }
  return undefined
}

// What DSH says about the size of this step's context, as it says it: the routed model's
// window (the llm service) and the compaction service's settings. The sidecar works out
// the threshold and the core the budget; here we only read. Model info is asked once per
// provider/model; undefined on a host without these services.
async function hostFacts(ctx, agent, signal, models) {
  try {
    const header = agent?.session?.requestHeader?.()?.config
    const provider = header?.provider || agent?.options?.provider
    const model = header?.model || agent?.options?.model
    if (typeof provider !== 'string' || !provider || typeof model !== 'string' || !model) return undefined
    const key = `${provider}\u0000${model}`
    if (!models.has(key)) {
      models.set(key, null) // asked once: a failing lookup is not retried at every step
      const llm = ctx.get?.('llm')
      if (llm) models.set(key, await llm.resolveModelInfo(provider, model, signal))
    }
    const info = models.get(key)
    const engine = ctx.get?.('compaction')
    const tuning = engine?.config // compaction-basic's resolved settings
    const policy = Array.isArray(tuning?.modelPolicies)
      ? tuning.modelPolicies.find((p) => p?.provider === provider && p?.model === model)
      : undefined
    return {
      provider,
      model,
      contextWindow: info?.context?.contextWindow,
      defaultMaxTokens: info?.defaultMaxTokens,
      maxTokens: header?.maxTokens,
      compaction: tuning
        ? {
            engine: engine?.constructor?.name,
            auto: tuning.auto,
            thresholdRatio: policy?.thresholdRatio ?? tuning.thresholdRatio,
            headroomTokens: policy?.headroomTokens ?? tuning.headroomTokens,
          }
        : undefined,
    }
  } catch {
    return undefined
  }
}

// True for the first turn of a session that inherited nothing: memory has nothing for it
// yet, so it need not wait for a sidecar that is still starting.
function freshFirstTurn(agent, turn) {
  try {
    return turn === 1 && !(agent?.session?.inheritedEventCount > 0)
  } catch {
    return false
  }
}

// The session's events from the newest back. DSH 0.2 has `eventAt(seq)` and `seq` (the
// next seq), so walking back to the turn start costs only this turn's events; older
// releases expose an `events` array.
function* newestFirst(session) {
  if (typeof session?.eventAt === 'function' && Number.isSafeInteger(session?.seq)) {
    for (let seq = session.seq - 1; seq >= 0; seq--) {
      const event = session.eventAt(seq)
      if (event) yield event
    }
    return
  }
  const events = allEvents(session)
  for (let i = events.length - 1; i >= 0; i--) yield events[i]
}

// Every event this session logged itself (a forked session's inherited events belong to
// its parent), as live capture saw them.
function allEvents(session) {
  try {
    for (const read of [() => session.ownEvents(), () => session.snapshotEvents(), () => session.events]) {
      try {
        const events = read()
        if (events && typeof events.length === 'number') return Array.from(events)
      } catch {
        // not this host's API; try the next
      }
    }
  } catch {}
  return []
}

// The session's working folder, for relative paths in tool calls.
function sessionCwd(agent) {
  try {
    const cwd = agent?.session?.header?.cwd
    return typeof cwd === 'string' && cwd ? cwd : undefined
  } catch {
    return undefined
  }
}

/** One sidecar process and its pending requests; every method is total. */
class Sidecar {
  constructor(spec) {
    this.spec = spec
    this.child = undefined
    this.nextId = 1
    this.pending = new Map()
    this.stderrTail = []
    this.exits = 0
    this.lastExit = undefined
    this.dropped = 0
    this.stopped = false
    this.ready = false
    this.initId = undefined
    this.waiters = []
  }

  // Resolves true once the running sidecar has answered `initialize`, false after `ms`.
  whenReady(ms) {
    if (this.ready) return Promise.resolve(true)
    if (!this.alive()) return Promise.resolve(false)
    return new Promise((resolve) => {
      const waiter = (ok) => {
        clearTimeout(timer)
        resolve(ok)
      }
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter)
        resolve(false)
      }, ms)
      this.waiters.push(waiter)
    })
  }

  settleWaiters(ok) {
    for (const waiter of this.waiters.splice(0)) waiter(ok)
  }

  alive() {
    return this.child !== undefined && !this.stopped
  }

  start() {
    if (this.stopped) return false
    let child
    try {
      child = spawn(this.spec.command, this.spec.args, {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, ...this.spec.env },
        windowsHide: true,
      })
    } catch (error) {
      this.lastExit = `spawn failed: ${error?.message ?? error}`
      return false
    }
    this.child = child
    this.ready = false
    if (this.spec.niceness > 0) {
      try {
        setPriority(child.pid, this.spec.niceness)
      } catch {
        // not permitted here: the sidecar runs at the host's priority
      }
    }
    child.on('error', (error) => {
      this.lastExit = `sidecar error: ${error?.message ?? error}`
      this.onGone(child)
    })
    child.on('exit', (code, signal) => {
      this.lastExit = signal ? `sidecar killed by ${signal}` : `sidecar exited with code ${code}`
      this.onGone(child)
    })
    child.stdin.on('error', () => {}) // EPIPE after an exit is reported by 'exit'
    createInterface({ input: child.stdout }).on('line', (line) => this.onLine(line))
    createInterface({ input: child.stderr }).on('line', (line) => {
      this.stderrTail.push(line)
      if (this.stderrTail.length > STDERR_TAIL) this.stderrTail.shift()
    })
    this.initId = this.nextId++
    this.write({
      jsonrpc: '2.0',
      id: this.initId,
      method: 'initialize',
      params: { settings: this.spec.settings, cwd: process.cwd() },
    })
    return true
  }

  onGone(child) {
    if (this.child !== child) return
    this.child = undefined
    this.exits += 1
    this.ready = false
    this.settleWaiters(false)
    for (const [id, entry] of this.pending) {
      this.pending.delete(id)
      entry.settle({ ok: false, reason: this.lastExit ?? 'sidecar exited' })
    }
  }

  onLine(line) {
    let message
    try {
      message = JSON.parse(line)
    } catch {
      return
    }
    if (message?.id !== undefined && message.id === this.initId) {
      this.ready = true
      this.settleWaiters(true)
      return
    }
    const entry = this.pending.get(message?.id)
    if (!entry) return // an answer that came after its deadline
    this.pending.delete(message.id)
    if (message.error) entry.settle({ ok: false, reason: `sidecar error: ${message.error.message}` })
    else entry.settle({ ok: true, result: message.result })
  }

  write(message) {
    if (!this.alive()) return false
    let line
    try {
      line = JSON.stringify(message) + '\n'
    } catch (error) {
      return false
    }
    try {
      this.child.stdin.write(line)
      return true
    } catch {
      return false
    }
  }

  notify(method, params) {
    if (!this.write({ jsonrpc: '2.0', method, params })) this.dropped += 1
  }

  // Resolves {ok, result} or {ok: false, reason}; never rejects, never outlives `timeoutMs`.
  request(method, params, timeoutMs, signal) {
    return new Promise((resolve) => {
      if (!this.alive()) return resolve({ ok: false, reason: this.lastExit ?? 'sidecar not running' })
      const id = this.nextId++
      let done = false
      const onAbort = () => entry.settle({ ok: false, reason: 'step aborted' })
      const timer = setTimeout(
        () => entry.settle({ ok: false, reason: `no answer within ${timeoutMs} ms` }),
        timeoutMs,
      )
      const entry = {
        settle: (outcome) => {
          if (done) return
          done = true
          clearTimeout(timer)
          signal?.removeEventListener?.('abort', onAbort)
          this.pending.delete(id)
          resolve(outcome)
        },
      }
      this.pending.set(id, entry)
      signal?.addEventListener?.('abort', onAbort, { once: true })
      if (!this.write({ jsonrpc: '2.0', id, method, params })) {
        entry.settle({ ok: false, reason: 'could not write to the sidecar' })
      }
    })
  }

  stop() {
    this.stopped = true
    const child = this.child
    this.child = undefined
    this.settleWaiters(false)
    for (const [id, entry] of this.pending) {
      this.pending.delete(id)
      entry.settle({ ok: false, reason: 'plugin unloaded' })
    }
    if (!child) return
    try {
      child.stdin.end()
    } catch {}
    try {
      child.kill('SIGTERM')
    } catch {}
    // A sidecar stuck in a long write still goes away.
    const timer = setTimeout(() => {
      try {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      } catch {}
    }, 2000)
    timer.unref?.()
  }
}

export function apply(ctx, config = {}) {
  // Without settings here the sidecar keeps its own (`lcm serve --config FILE`).
  const settings = config.settings && typeof config.settings === 'object' ? config.settings : undefined
  const deadlineMs = clampDeadline(config.deadlineMs ?? settings?.host?.preStepDeadlineMs)
  const hideVisible = config.hideVisible === true
  const startWaitMs = Math.min(deadlineMs, Math.max(0, Number(config.startWaitMs ?? DEFAULT_START_WAIT_MS) || 0))
  const commandTimeoutMs = Math.max(deadlineMs, Number(config.commandTimeoutMs) || DEFAULT_COMMAND_TIMEOUT_MS)
  // `command` (an argv list) replaces the default `<python> -m lcm_adapter.dsh.sidecar --db <db>`.
  const custom = Array.isArray(config.command) && config.command.length && config.command.every((a) => typeof a === 'string')
  const args = custom ? config.command.slice(1) : ['-m', 'lcm_adapter.dsh.sidecar']
  if (typeof config.db === 'string' && config.db) args.push('--db', config.db)
  const python = typeof config.python === 'string' && config.python ? config.python : 'python3'
  const sidecar = new Sidecar({
    command: custom ? config.command[0] : python,
    args,
    env: config.env && typeof config.env === 'object' ? config.env : {},
    settings,
    niceness: Math.min(19, Math.max(0, Math.round(Number(config.niceness ?? DEFAULT_NICENESS) || 0))),
  })
  const state = { restarts: 0, restartedFor: new Set(), skips: 0, lastSkip: undefined, unsent: [] }
  const models = new Map() // provider/model -> DSH's model info, for hostFacts

  // The step went on without memory: say why, in the sidecar's log when it can hear us.
  const recordSkip = (sessionId, turn, step, reason) => {
    state.skips += 1
    state.lastSkip = `turn ${turn} step ${step}: ${reason}`
    const params = { sessionId, turn, step, reason }
    if (sidecar.alive()) sidecar.notify('skip', params)
    else if (state.unsent.length < MAX_PENDING_SKIPS) state.unsent.push(params)
  }

  // Restart a dead sidecar at most once per turn, and give it the session so far.
  const ensureRunning = (agent, sessionId, turn) => {
    if (sidecar.alive() || sidecar.stopped) return sidecar.alive()
    const key = `${sessionId}\u0000${turn}`
    if (state.restartedFor.has(key)) return false
    state.restartedFor.add(key)
    if (!sidecar.start()) return false
    state.restarts += 1
    const events = allEvents(agent?.session)
    if (events.length) sidecar.notify('events', { sessionId, events })
    for (const params of state.unsent.splice(0)) sidecar.notify('skip', params)
    return true
  }

  ctx.effect(() => {
    sidecar.start()
    return () => sidecar.stop()
  })

  ctx.on('session/event', (session, event) => {
    const sessionId = session?.id
    if (typeof sessionId === 'string' && sessionId) sidecar.notify('event', { sessionId, event })
  })

  ctx.on('agent/pre-step', async (payload, next) => {
    const decision = await next()
    try {
      const { agent, turn, step, signal } = payload
      if (decision?.kind === 'reject' || signal?.aborted) return decision
      const sessionId = sessionIdOf(agent)
      if (!sessionId) return decision
      if (!ensureRunning(agent, sessionId, turn)) {
        recordSkip(sessionId, turn, step, `sidecar not running (${sidecar.lastExit ?? 'no process'})`)
        return decision
      }
      if (freshFirstTurn(agent, turn)) {
        if (startWaitMs === 0) {
          // Not a failure: logged for `explain`, not counted as a step without memory.
          sidecar.notify('skip', { sessionId, turn, step, reason: 'turn 1 of a new session: no memory yet (startWaitMs 0)' })
          return decision
        }
        if (!sidecar.ready && !(await sidecar.whenReady(startWaitMs))) {
          recordSkip(sessionId, turn, step, `sidecar still starting after ${startWaitMs} ms (turn 1 of a new session)`)
          return decision
        }
      }
      const answer = await sidecar.request(
        'preStep',
        {
          sessionId,
          messages: decision.messages,
          turn,
          step,
          visibleSeqs: visibleSeqs(agent, turn, hideVisible),
          surfaceSeqs: surfaceSeqs(agent),
          host: await hostFacts(ctx, agent, signal, models),
        },
        deadlineMs,
        signal,
      )
      if (!answer.ok) {
        recordSkip(sessionId, turn, step, answer.reason)
        return decision
      }
      const message = answer.result?.message
      if (!message || signal?.aborted) return decision
      if (message?.source?.kind !== SOURCE_KIND) return decision
      return { ...decision, messages: [...decision.messages, message] }
    } catch (error) {
      state.lastSkip = `pre-step failed: ${error?.message ?? error}`
      return decision
    }
  })

  ctx.on('tools/pre-execute', async (exec, next) => {
    const decision = await next()
    try {
      if (decision?.kind !== 'allow') return decision
      const sessionId = sessionIdOf(exec?.agent)
      if (!sessionId || !sidecar.alive()) return decision
      // A configured precondition should hold from the first tool call: a sidecar still
      // starting (turn 1 does not wait for it) gets up to TOOL_START_WAIT_MS to come up.
      if (!sidecar.ready && !(await sidecar.whenReady(Math.max(deadlineMs, TOOL_START_WAIT_MS)))) {
        return decision
      }
      const answer = await sidecar.request(
        'preTool',
        { sessionId, tool: exec.name, args: exec.arguments ?? null, cwd: sessionCwd(exec.agent) },
        deadlineMs,
        exec.signal,
      )
      const verdict = answer.ok ? answer.result : undefined
      if (verdict?.kind === 'deny' && typeof verdict.reason === 'string') {
        return { kind: 'deny', reason: verdict.reason }
      }
      return decision
    } catch {
      return decision
    }
  })

  const pluginNote = () => {
    const parts = []
    if (state.restarts) parts.push(`sidecar restarts ${state.restarts}`)
    if (state.skips) parts.push(`steps without memory ${state.skips} (last: ${state.lastSkip})`)
    if (sidecar.dropped) parts.push(`events not delivered ${sidecar.dropped}`)
    return parts.length ? `\nplugin: ${parts.join('; ')}` : ''
  }

  // The command needs the optional commands service; the rest of the plugin does not.
  try {
    ctx.plugin({
      name: 'long-conversation-memory-command',
      inject: ['commands'],
      apply(sub) {
        sub.commands.register({
          name: 'memory',
          description: 'Long-conversation memory: status, explain, inspect, search, export, purge, forget, remember, pin',
          input: { hint: 'status | explain | inspect <id|seq:N> | search <words> | export [file] | purge [--yes] | forget <id>|--event <seq> [reason] | remember [--kind K] <text> | pin <id> | unpin <id>' },
          handler: async ({ agent, rawInput, signal }) => {
            const sessionId = sessionIdOf(agent)
            if (!sessionId) return { kind: 'error', text: 'memory: no session' }
            if (!sidecar.alive() && !sidecar.stopped && sidecar.start()) state.restarts += 1
            const answer = await sidecar.request(
              'command',
              { sessionId, input: typeof rawInput === 'string' ? rawInput : '' },
              commandTimeoutMs,
              signal,
            )
            if (!answer.ok) {
              const tail = sidecar.stderrTail.slice(-3).join('\n')
              return { kind: 'error', text: `memory: ${answer.reason}${tail ? `\n${tail}` : ''}${pluginNote()}` }
            }
            const text = `${answer.result?.text ?? ''}${pluginNote()}`
            return answer.result?.ok ? { kind: 'success', text } : { kind: 'error', text }
          },
        })
      },
    })
  } catch {
    // a host without sub-plugins: memory works, only the command is missing
  }
}
