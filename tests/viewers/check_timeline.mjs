// Opens a --timeline file with the trace engine of the Chrome DevTools Performance panel (the code the
// panel's "Load profile" runs, published on npm as @paulirish/trace_engine) and checks that it read
// the whole file: no error or warning from the engine (it reports a begin/end mismatch with
// console.error), every track with slices a thread of its name holding all of them (none dropped as
// overlapping its neighbour), every flow drawn between the two slices it binds to, and the counters
// there. (The engine keeps no counters of a trace that is not Chrome's: they are checked in the file,
// numeric and on named tracks, for the viewers that draw them.)
//
// usage: node check_timeline.mjs --modules DIR [--no-flows | --flows-from LIST] TIMELINE.json ...
//   DIR: where install.sh put node_modules (the build tree's viewers/); --no-flows: the scenarios have
//   no fence flows; --flows-from LIST: the files named in LIST (one base name a line, timelines.sh's
//   flows.txt) must have flows, the others may; neither: every file must have flows (so the flow check
//   is not vacuous).
// Exit status: 0 passed, 1 failed, 77 the engine is not installed (skipped, with the one command that
// installs it).
import fs from 'node:fs';
import path from 'node:path';
import url from 'node:url';

const args = process.argv.slice(2);
const at = args.indexOf('--modules');
const modules = at >= 0 ? args.splice(at, 2)[1] : null;
const noFlows = args.includes('--no-flows');
if (noFlows) args.splice(args.indexOf('--no-flows'), 1);
const listAt = args.indexOf('--flows-from');
const flowList = listAt >= 0 ? new Set(fs.readFileSync(args.splice(listAt, 2)[1], 'utf8').split('\n').filter(Boolean)) : null;
const files = args;
if (!modules || !files.length) {
  console.error('usage: node check_timeline.mjs --modules DIR [--no-flows | --flows-from LIST] TIMELINE.json ...');
  process.exit(2);
}
const engineDir = path.join(modules, 'node_modules', '@paulirish', 'trace_engine');
if (!fs.existsSync(path.join(engineDir, 'package.json'))) {
  console.log(`SKIP: the DevTools trace engine is not installed in ${modules}; install it with: ` +
              `tests/viewers/install.sh ${path.dirname(path.resolve(modules))}`);
  process.exit(77);
}
const engineVersion = JSON.parse(fs.readFileSync(path.join(engineDir, 'package.json'), 'utf8')).version;

// The engine is written for a browser: DOMRect (its own analyze-trace.mjs polyfills it the same way)
// and, on Node before 22 (Debian 12 has 18), URL.parse.
const {polyfillDOMRect} = await import(url.pathToFileURL(path.join(engineDir, 'analyze-trace.mjs')).href);
polyfillDOMRect();
if (!URL.parse) {
  URL.parse = (u, base) => {
    try {
      return new URL(u, base);
    } catch {
      return null;
    }
  };
}
const Trace = await import(url.pathToFileURL(path.join(engineDir, 'models', 'trace', 'trace.js')).href);

async function check(file) {
  const problems = [];
  const mustFlow = noFlows ? false : flowList ? flowList.has(path.basename(file)) : true;
  const fail = (msg) => problems.push(msg);
  const events = (() => {
    const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    return Array.isArray(doc) ? doc : doc.traceEvents;
  })();

  // What the file holds, per track (pid:tid).
  const key = (e) => `${e.pid}:${e.tid}`;
  const threadName = new Map();
  const slices = new Map();  // track -> X events
  const counters = new Map();  // track -> C events
  const starts = new Map(), ends = new Map();  // flow id -> s, f
  for (const e of events) {
    if (e.ph === 'M' && e.name === 'thread_name') threadName.set(key(e), e.args.name);
    if (e.ph === 'X' || e.ph === 'I') slices.set(key(e), (slices.get(key(e)) ?? 0) + 1);  // a thread's entries
    if (e.ph === 'C') {
      if (!counters.has(key(e))) counters.set(key(e), []);
      counters.get(key(e)).push(e);
    }
    if (e.ph === 's') starts.set(e.id, e);
    if (e.ph === 'f') ends.set(e.id, e);
  }

  // The engine's reading, with whatever it logs as an error or warning.
  const logged = [];
  const saved = {error: console.error, warn: console.warn};
  console.error = (...a) => logged.push('error: ' + a.join(' '));
  console.warn = (...a) => logged.push('warning: ' + a.join(' '));
  const t0 = performance.now();
  let data;
  try {
    const model = Trace.TraceModel.Model.createWithAllHandlers();
    await model.parse(events);
    data = model.parsedTrace().data;
  } catch (e) {
    fail(`the engine failed to parse the file: ${e.stack ?? e}`);
  }
  const parseMs = performance.now() - t0;
  Object.assign(console, saved);
  for (const m of logged.slice(0, 10)) fail(`the engine logged ${m}`);
  if (logged.length > 10) fail(`... ${logged.length} messages logged in all`);

  if (data) {
    for (const [warning, list] of data.Warnings?.perWarning ?? []) fail(`the engine warns ${warning} (${list.length})`);
    // Tracks: every track with slices is a thread of its name holding them all, each in its tree.
    const processes = data.Renderer.processes;
    let threads = 0;
    for (const [pid, proc] of processes) {
      for (const [tid, thread] of proc.threads) {
        ++threads;
        const k = `${pid}:${tid}`;
        if (!slices.has(k)) fail(`the engine made thread ${k} (${thread.name}), a track with no slices in the file`);
      }
    }
    for (const [k, count] of slices) {
      const [pid, tid] = k.split(':').map(Number);
      const thread = processes.get(pid)?.threads.get(tid);
      if (!thread) {
        fail(`track ${threadName.get(k)} (${k}): no thread in the engine`);
        continue;
      }
      if (thread.name !== threadName.get(k))
        fail(`track ${k}: the engine names it '${thread.name}', the file '${threadName.get(k)}'`);
      if (thread.entries.length !== count)
        fail(`track ${threadName.get(k)}: ${thread.entries.length} slices in the engine, ${count} in the file`);
      const inTree = thread.entries.filter((e) => data.Renderer.entryToNode.has(e)).length;
      if (inTree !== count)
        fail(`track ${threadName.get(k)}: ${count - inTree} of ${count} slices dropped from its tree (overlapping)`);
    }
    // Flows: each one the engine drew is one of the file's, between the slices at its two ends.
    const endpoint = (e) => `${e.pid}:${e.tid}@${e.ts}`;
    const want = new Map();  // "start -> end" -> count
    for (const [id, s] of starts) {
      const f = ends.get(id);
      if (!f) continue;
      const k = `${endpoint(s)} -> ${endpoint(f)}`;
      want.set(k, (want.get(k) ?? 0) + 1);
    }
    const drawn = data.Flows.flows;
    if (drawn.length !== starts.size) fail(`${drawn.length} flows in the engine, ${starts.size} in the file`);
    for (const flow of drawn) {
      const k = flow.length === 2 ? `${endpoint(flow[0])} -> ${endpoint(flow[1])}` : `${flow.length} events`;
      if (!want.get(k)) {
        fail(`the engine drew a flow the file does not have: ${k}`);
        continue;
      }
      want.set(k, want.get(k) - 1);
      if (flow.some((e) => (e.ph !== 'X' && e.ph !== 'I') || e.cat !== 'fence'))
        fail(`flow ${k} bound to an event that is not its own fence slice or instant`);
    }
    if (mustFlow && starts.size === 0) fail('the file has no flows');
    if (noFlows && starts.size) fail(`--no-flows, but the file has ${starts.size}`);
    if (slices.size === 0) fail('the file has no slices');
    // Counters: the engine keeps none of a trace that is not Chrome's; in the file, numeric, named.
    let samples = 0;
    for (const [k, list] of counters) {
      if (!threadName.has(k)) fail(`counter track ${k} has no thread_name`);
      for (const e of list) {
        ++samples;
        if (!e.args || !Object.values(e.args).length || Object.values(e.args).some((v) => typeof v !== 'number'))
          fail(`counter ${e.name} at ${e.ts}: args not numeric`);
      }
    }
    if (counters.size === 0) fail('the file has no counters');
    if (problems.length === 0) {
      console.log(`DevTools trace engine ${engineVersion} (Node ${process.version}) read ${file}: ` +
                  `${events.length} events, ${threads} threads with ${[...slices.values()].reduce((a, b) => a + b, 0)} ` +
                  `slices, ${drawn.length} flows, ${samples} counter samples on ${counters.size} tracks (not drawn by ` +
                  `DevTools); no error or warning; parsed in ${(parseMs / 1000).toFixed(2)} s`);
    }
  }
  return problems;
}
let failed = 0;
for (const file of files) {
  const problems = await check(file);
  if (problems.length) {
    ++failed;
    console.log(`DevTools trace engine ${engineVersion} (Node ${process.version}) on ${file}:`);
    for (const p of problems) console.log('  ' + p);
  }
}
if (files.length > 1) console.log(`${files.length - failed} of ${files.length} timelines read cleanly`);
process.exit(failed ? 1 : 0);
