// Loads a Trace Event Format file with Chrome DevTools' trace engine (the
// Performance panel's model, npm @paulirish/trace_engine) and prints, as
// JSON, what the engine made of it: whether it read the trace as a
// generic (non-Chrome) one, the trace bounds, the process names, and per
// thread its name and the slices of its call tree by category, with the
// slices whose nesting is not wave > instruction > stall.
//
// Usage: node devtools_check.mjs ENGINE_DIR TRACE.json
import fs from 'node:fs';

const [, , engineDir, file] = process.argv;
const Trace = await import(engineDir + '/models/trace/trace.js');
// The engine expects a browser's DOMRect (its README says to polyfill it).
globalThis.DOMRect ??= class DOMRect {
  constructor(x = 0, y = 0, width = 0, height = 0) { Object.assign(this, {x, y, width, height}); }
};

const json = JSON.parse(fs.readFileSync(file, 'utf8'));
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(json.traceEvents);
const data = model.parsedTrace().data;

const out = {
  generic: data.Meta.traceIsGeneric,
  bounds: {min: data.Meta.traceBounds.min, max: data.Meta.traceBounds.max},
  processNames: {},
  threads: [],
};
for (const [pid, ev] of data.Meta.processNames) out.processNames[pid] = ev.args.name;
for (const [pid, proc] of data.Renderer.processes) {
  for (const [tid, th] of proc.threads) {
    const t = {pid, tid, name: th.name ?? '', roots: 0, byCat: {}, misnested: 0};
    const walk = (node, ancestors) => {
      const cat = node.entry.cat;
      t.byCat[cat] = (t.byCat[cat] ?? 0) + 1;
      const ok = cat === 'wave' ? ancestors.length === 0 :
          cat === 'instruction' ? ancestors[0] === 'wave' :
          cat === 'stall' ? ancestors.at(-1) === 'instruction' : true;
      if (!ok) t.misnested++;
      for (const c of node.children) walk(c, [...ancestors, cat]);
    };
    for (const root of th.tree?.roots ?? []) {
      t.roots++;
      walk(root, []);
    }
    out.threads.push(t);
  }
}
console.log(JSON.stringify(out));
