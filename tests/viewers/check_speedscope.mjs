// Opens --timeline files in speedscope: its published app (npm speedscope, dist/release: the page and
// bundle https://www.speedscope.app serves), in a DOM (jsdom), loaded the way speedscope's own command
// line tool loads a file (index.html#localProfilePath=FILE.js, a script that calls
// speedscope.loadFileFromBase64). Checked: speedscope imports it as a Trace Event Format profile, names
// the page after it (the import finished), and neither the importer nor the app logs a warning or an
// error: speedscope's importer warns on every slice that ends while another is on top of its track's
// stack ("Tried to end X when Y was on the top of the stack") and on one still open at the end. Only
// the drawing is absent: jsdom has no canvas, so the app says it cannot create its WebGL context (that
// one message, and jsdom's own "not implemented" for the canvas, are expected and ignored).
//
// usage: node check_speedscope.mjs --modules DIR TIMELINE.json ...
//   DIR: where install.sh put node_modules (the build tree's viewers/).
// Exit status: 0 passed, 1 failed, 77 speedscope or jsdom is not installed (skipped, with the command).
import fs from 'node:fs';
import path from 'node:path';
import {createRequire} from 'node:module';

const args = process.argv.slice(2);
const at = args.indexOf('--modules');
const modules = at >= 0 ? args.splice(at, 2)[1] : null;
const files = args;
if (!modules || !files.length) {
  console.error('usage: node check_speedscope.mjs --modules DIR TIMELINE.json ...');
  process.exit(2);
}
const release = path.join(modules, 'node_modules', 'speedscope', 'dist', 'release');
const require = createRequire(path.join(path.resolve(modules), 'package.json'));
let jsdom;
try {
  jsdom = require('jsdom');
} catch {
  jsdom = null;
}
if (!fs.existsSync(path.join(release, 'index.html')) || !jsdom) {
  console.log(`SKIP: speedscope or jsdom is not installed in ${modules}; install them with: ` +
              `tests/viewers/install.sh ${path.dirname(path.resolve(modules))}`);
  process.exit(77);
}
const version = JSON.parse(fs.readFileSync(path.join(modules, 'node_modules', 'speedscope', 'package.json'), 'utf8')).version;
const {JSDOM, VirtualConsole, ResourceLoader} = jsdom;

// What the page fetches: the release's own files, and the profile script the command line tool writes.
class Release extends ResourceLoader {
  constructor(profileScript) {
    super();
    this.profileScript = profileScript;
  }
  fetch(u) {
    const name = new URL(u).pathname.slice(1);
    if (name === 'profile.js') return Promise.resolve(Buffer.from(this.profileScript));
    const file = path.join(release, path.basename(name));
    return fs.existsSync(file) ? Promise.resolve(fs.readFileSync(file)) : Promise.reject(new Error(`no ${name}`));
  }
}

// The expected messages of a DOM without a canvas, and speedscope's own progress lines.
const expected = [/^jsdomError: Not implemented: HTMLCanvasElement\.prototype\.getContext/,
                  /^error: Failed to create WebGL context/, /^log: speedscope v/, /^log: Importing as /];

async function check(file) {
  const problems = [];
  const name = path.basename(file);
  const script = `speedscope.loadFileFromBase64(${JSON.stringify(name)}, ` +
                 `${JSON.stringify(fs.readFileSync(file).toString('base64'))})`;
  const logged = [];
  const vc = new VirtualConsole();
  for (const level of ['log', 'info', 'warn', 'error'])
    vc.on(level, (...a) => logged.push(`${level}: ${a.map(String).join(' ')}`));
  vc.on('jsdomError', (e) => logged.push(`jsdomError: ${e.message}`));
  const t0 = performance.now();
  const dom = new JSDOM(fs.readFileSync(path.join(release, 'index.html'), 'utf8'), {
    url: 'http://speedscope.invalid/index.html#localProfilePath=profile.js',
    runScripts: 'dangerously',
    resources: new Release(script),
    pretendToBeVisual: true,
    virtualConsole: vc,
    // What a browser has and jsdom lacks, as far as the app needs it before it draws.
    beforeParse(w) {
      w.TextDecoder = TextDecoder;
      w.TextEncoder = TextEncoder;
      w.Element.prototype.scrollIntoView = function() {};
      w.matchMedia = (q) => ({matches: false, media: q, addEventListener() {}, removeEventListener() {},
                              addListener() {}, removeListener() {}});
    },
  });
  // Loaded when the page carries the profile's name (speedscope sets the title once it has imported).
  const want = `${name} - speedscope`;
  for (let waited = 0; dom.window.document.title !== want && waited < 60000; waited += 10)
    await new Promise((r) => setTimeout(r, 10));
  const ms = performance.now() - t0, title = dom.window.document.title;
  dom.window.close();
  if (title !== want) problems.push(`not loaded within 60 s (the page's title: ${title})`);
  if (!logged.includes('log: Importing as Trace Event Format profile'))
    problems.push(`not imported as a Trace Event Format profile: ${logged.filter((l) => l.startsWith('log: Importing')).join('; ') || 'no import line'}`);
  const unexpected = logged.filter((l) => !expected.some((re) => re.test(l)));
  for (const m of unexpected.slice(0, 10)) problems.push(`speedscope logged ${m.slice(0, 300)}`);
  if (unexpected.length > 10) problems.push(`... ${unexpected.length} messages logged in all`);
  return {problems, ms};
}

// An error thrown from the app's own callbacks reaches this process: it is a failure of the file open.
let current = null;
process.on('uncaughtException', (e) => {
  console.log(`speedscope ${version} threw on ${current}: ${String(e.stack ?? e).slice(0, 500)}`);
  process.exit(1);
});
let failed = 0;
for (const file of files) {
  current = file;
  const {problems, ms} = await check(file);
  if (problems.length) {
    ++failed;
    console.log(`speedscope ${version} on ${file}:`);
    for (const p of problems) console.log('  ' + p);
  } else {
    console.log(`speedscope ${version} (jsdom, Node ${process.version}) imported ${file} with no warning or error ` +
                `in ${(ms / 1000).toFixed(2)} s`);
  }
}
if (files.length > 1) console.log(`${files.length - failed} of ${files.length} timelines read cleanly`);
process.exit(failed ? 1 : 0);
