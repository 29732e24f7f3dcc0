// Opens --timeline files with Chrome DevTools' older trace parser: the TracingModel of the 2017 DevTools
// front end (npm chrome-devtools-frontend, loaded the way devtools-timeline-model loads it), a second
// implementation beside the current trace engine. Its timeline stage is not used: it looks for a
// Chrome browser's main thread and fails on any other trace, so the check stops at what the older
// Performance panel builds before it (processes, threads and their events) and walks each thread the
// way its timeline stage does (TimelineModel.forEachEvent, in milliseconds, the parser's own unit).
// Checked: the parser logs no error (it reports an event missing its mandatory args, a B/E mismatch, a
// malformed id); every track is a thread of its name holding all its slices and instants; and in the
// walk no slice ends after the slice it opened inside (the walk would end the outer one first).
//
// usage: node check_tracing_model.cjs --modules DIR TIMELINE.json ...
//   DIR: where install.sh put node_modules (the build tree's viewers/).
// Exit status: 0 passed, 1 failed, 77 not installed (skipped, with the command that installs it).
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const args = process.argv.slice(2);
const at = args.indexOf('--modules');
const modules = at >= 0 ? args.splice(at, 2)[1] : null;
const files = args;
if (!modules || !files.length) {
  console.error('usage: node check_tracing_model.cjs --modules DIR TIMELINE.json ...');
  process.exit(2);
}
const wrapper = path.join(path.resolve(modules), 'node_modules', 'devtools-timeline-model');
const frontend = path.join(path.resolve(modules), 'node_modules', 'chrome-devtools-frontend');
if (!fs.existsSync(path.join(wrapper, 'lib', 'timeline-model.js')) || !fs.existsSync(frontend)) {
  console.log(`SKIP: devtools-timeline-model is not installed in ${modules}; install it with: ` +
              `tests/viewers/install.sh ${path.dirname(path.resolve(modules))}`);
  process.exit(77);
}
const version = JSON.parse(fs.readFileSync(path.join(frontend, 'package.json'), 'utf8')).version;

// The front end in a context of its own, as devtools-timeline-model's index.js sets it up.
const logged = [];
const sink = {
  log: () => {},
  info: () => {},
  warn: (...a) => logged.push('warning: ' + a.join(' ')),
  error: (...a) => logged.push('error: ' + a.join(' ')),
};
const wrapperRequire = require('module').createRequire(path.join(wrapper, 'index.js'));
const ctx = vm.createContext({require: wrapperRequire, global, console: sink, __dirname: wrapper});
new vm.Script(fs.readFileSync(path.join(wrapper, 'lib', 'timeline-model.js'), 'utf8')).runInContext(ctx);
const parse = vm.runInContext(`(events) => {
  const model = new SDK.TracingModel(new Bindings.TempFileBackingStorage('tracing'));
  model.setEventsForTest(events);
  return model;
}`, ctx);

function check(file) {
  const problems = [];
  const fail = (m) => problems.push(m);
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  const events = Array.isArray(doc) ? doc : doc.traceEvents;
  const threadName = new Map(), entries = new Map();
  for (const e of events) {
    const k = `${e.pid}:${e.tid}`;
    if (e.ph === 'M' && e.name === 'thread_name') threadName.set(k, e.args.name);
    if (e.ph === 'X' || e.ph === 'I') entries.set(k, (entries.get(k) ?? 0) + 1);
  }
  logged.length = 0;
  let model;
  try {
    model = parse(events);
  } catch (e) {
    fail(`the parser threw: ${String(e.stack ?? e).slice(0, 400)}`);
  }
  for (const m of logged.slice(0, 10)) fail(`the parser logged ${m.slice(0, 300)}`);
  if (logged.length > 10) fail(`... ${logged.length} messages logged in all`);
  if (!model) return problems;
  let threads = 0, walked = 0;
  const seen = new Set();
  for (const proc of model.sortedProcesses()) {
    for (const thread of proc.sortedThreads()) {
      const k = `${proc.id()}:${thread.id()}`;
      const mine = thread.events().filter((e) => e.phase === 'X' || e.phase === 'I');
      if (!mine.length) continue;
      ++threads;
      seen.add(k);
      if (thread.name() !== threadName.get(k))
        fail(`track ${k}: the parser names it '${thread.name()}', the file '${threadName.get(k)}'`);
      if (mine.length !== entries.get(k))
        fail(`track ${threadName.get(k)}: ${mine.length} slices and instants in the parser, ${entries.get(k)} in the file`);
      // The timeline stage's walk (TimelineModel.forEachEvent): events by start; an open slice ends
      // when one starts at or after its end; a slice that starts inside one must end inside it.
      const stack = [];
      for (const e of mine) {
        while (stack.length && stack[stack.length - 1].endTime <= e.startTime) stack.pop();
        if (!e.duration) continue;
        const top = stack[stack.length - 1];
        if (top && e.endTime > top.endTime)
          fail(`track ${threadName.get(k)}: '${e.name}' at ${e.startTime} ms ends at ${e.endTime}, after '${top.name}' ` +
               `that it opened inside (ends ${top.endTime})`);
        stack.push(e);
        ++walked;
      }
    }
  }
  for (const k of entries.keys())
    if (!seen.has(k)) fail(`track ${threadName.get(k)} (${k}): no thread in the parser`);
  if (!problems.length)
    console.log(`DevTools TracingModel (chrome-devtools-frontend ${version}, Node ${process.version}) read ${file}: ` +
                `${threads} threads, ${walked} slices walked; no error`);
  return problems;
}

let failed = 0;
for (const file of files) {
  const problems = check(file);
  if (problems.length) {
    ++failed;
    console.log(`DevTools TracingModel (chrome-devtools-frontend ${version}) on ${file}:`);
    for (const p of problems.slice(0, 20)) console.log('  ' + p);
    if (problems.length > 20) console.log(`  ... ${problems.length} problems in all`);
  }
}
if (files.length > 1) console.log(`${files.length - failed} of ${files.length} timelines read cleanly`);
process.exit(failed ? 1 : 0);
