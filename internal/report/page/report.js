// att-report's page: draws the report from the JSON in <script id="data">.
// Written for this page; no library. Long lists are virtual (only the rows
// in view are in the DOM), charts are canvases.
"use strict";
(function () {
  var D = JSON.parse(document.getElementById("data").textContent);
  var I = D.insts, L = D.lines;
  var app = document.getElementById("app");
  app.textContent = "";

  function el(tag, attrs, kids) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === "text") e.textContent = attrs[k];
      else if (k === "cls") e.className = attrs[k];
      else if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), attrs[k]);
      else e.setAttribute(k, attrs[k]);
    }
    if (kids) kids.forEach(function (c) { if (c != null) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return e;
  }
  function num(v) {
    if (v == null) return "";
    if (Math.abs(v) >= 1e4) return Math.round(v).toLocaleString("en-US");
    return String(v);
  }
  function hex(a) { return "0x" + a.toString(16); }
  function maxOf(a, idx) { var m = 0; for (var i = 0; i < idx.length; i++) if (a[idx[i]] > m) m = a[idx[i]]; return m; }

  // The tooltip of an instruction: its source chain, one frame a line.
  var tip = el("div", { id: "tip" });
  document.body.appendChild(tip);
  function showTip(ev, text) {
    if (!text) { tip.style.display = "none"; return; }
    tip.textContent = text;
    tip.style.display = "block";
    var x = Math.min(ev.clientX + 12, window.innerWidth - tip.offsetWidth - 4);
    tip.style.left = Math.max(0, x) + "px";
    tip.style.top = (ev.clientY + 14) + "px";
  }
  function chainText(i) {
    var s = I.src[i], ch = I.chain[i];
    var lines = [I.text[i] || "(no ISA text)", "@ " + hex(I.addr[i]) + " in code object " + I.codeobj[i]];
    if (ch >= 0) {
      var fs = I.chains[ch];
      lines.push(fs.length > 1 ? "inline chain, innermost first:" : "function:");
      fs.forEach(function (f, k) { lines.push((k ? "  inlined into " : "  ") + (f.function || "?") + "  " + f.file + ":" + (f.line || "?")); });
      return lines.join("\n");
    }
    if (s < 0) return lines.concat(["no source line"]).join("\n");
    var fr = D.insts.srcs[s].split(" -> ");
    lines.push(fr.length > 1 ? "inline chain, innermost first:" : "source:");
    fr.forEach(function (f, k) { lines.push((k ? "  called from " : "  ") + f); });
    return lines.join("\n");
  }

  // A virtual list: a head of sortable columns, a scrolled body holding
  // only the rows in view.
  function VList(cls, cols, rowH) {
    var self = this;
    this.cols = cols; this.rowH = rowH; this.rows = []; this.sortKey = null; this.sortDir = 0;
    this.head = el("div", { cls: "vhead " + cls });
    cols.forEach(function (c, ci) {
      var h = el("div", { text: c.name, title: c.title || c.name, style: c.num ? "text-align:right" : "",
        onclick: function () { self.sortBy(ci); } });
      c.th = h;
      self.head.appendChild(h);
    });
    this.space = el("div", { cls: "vspace" });
    this.body = el("div", { cls: "vbody" }, [this.space]);
    this.cls = cls;
    this.body.addEventListener("scroll", function () { self.draw(); });
    this.node = el("div", null, [this.head, this.body]);
  }
  VList.prototype.set = function (rows, keepSort) {
    this.base = rows.slice();
    this.rows = rows.slice();
    if (keepSort && this.sortKey != null) this.applySort(); else { this.sortKey = null; this.marks(); }
    this.max = {};
    var self = this;
    this.cols.forEach(function (c) { if (c.bar) self.max[c.key] = maxOf(c.bar, self.rows); });
    this.space.style.height = (this.rows.length * this.rowH) + "px";
    this.body.scrollTop = 0;
    this.draw(true);
  };
  VList.prototype.sortBy = function (ci) {
    if (this.sortKey === ci) this.sortDir = -this.sortDir;
    else { this.sortKey = ci; this.sortDir = this.cols[ci].num ? -1 : 1; }
    this.applySort();
    this.body.scrollTop = 0;
    this.draw(true);
  };
  VList.prototype.applySort = function () {
    var c = this.cols[this.sortKey], dir = this.sortDir, base = this.base, pos = new Map();
    base.forEach(function (r, i) { pos.set(r, i); });
    this.rows = base.slice().sort(function (a, b) {
      var x = c.sort(a), y = c.sort(b);
      if (x < y) return -dir; if (x > y) return dir;
      return pos.get(a) - pos.get(b);
    });
    this.marks();
  };
  VList.prototype.marks = function () {
    var self = this;
    this.cols.forEach(function (c, ci) { c.th.className = ci === self.sortKey ? (self.sortDir < 0 ? "desc" : "asc") : ""; });
  };
  VList.prototype.draw = function (force) {
    var h = this.rowH, top = this.body.scrollTop, view = this.body.clientHeight || 460;
    var first = Math.max(0, Math.floor(top / h) - 10), last = Math.min(this.rows.length, Math.ceil((top + view) / h) + 10);
    if (!force && first === this.first && last === this.last) return;
    this.first = first; this.last = last;
    var frag = document.createDocumentFragment();
    for (var i = first; i < last; i++) frag.appendChild(this.row(this.rows[i], i));
    this.space.textContent = "";
    this.space.appendChild(frag);
  };
  VList.prototype.row = function (r, i) {
    var self = this;
    var d = el("div", { cls: "vrow " + this.cls + (this.rowClass ? this.rowClass(r) : ""), style: "top:" + (i * this.rowH) + "px" });
    this.cols.forEach(function (c) {
      var v = c.value(r);
      if (c.bar) {
        var m = self.max[c.key] || 0, w = m > 0 ? (100 * (c.bar[r] || 0) / m) : 0;
        d.appendChild(el("div", { cls: "n " + c.key }, [el("i", { style: "width:" + w.toFixed(1) + "%" }), el("span", { text: num(v) })]));
      } else {
        d.appendChild(el("div", { cls: c.cls || "", text: v }));
      }
    });
    if (this.onrow) this.onrow(d, r);
    return d;
  };
  VList.prototype.scrollTo = function (r) {
    var i = this.rows.indexOf(r);
    if (i >= 0) { this.body.scrollTop = Math.max(0, (i - 5) * this.rowH); this.draw(true); }
  };

  function barCol(name, key, arr, title) {
    return { name: name, key: key, bar: arr, num: true, title: title, value: function (r) { return arr[r]; }, sort: function (r) { return arr[r]; } };
  }

  // Page head.
  var meta = [D.producer];
  if (D.arch) meta.push(D.arch);
  meta.push("inputs: " + (D.inputs.length > 6 ? D.inputs.slice(0, 6).join(", ") + ", \u2026 (" + D.inputs.length + " in all)" : D.inputs.join(", ")));
  if (D.index) meta.push("index: " + D.index);
  app.appendChild(el("header", null, [el("h1", { text: D.title }), el("div", { cls: "meta", text: meta.join(" \u00b7 ") })]));
  var main = el("main");
  app.appendChild(main);

  var legend = el("div", { cls: "legend" }, [
    el("span", null, [el("b", { style: "background:var(--lat)" }), "latency: cycles from first issue attempt to completion, max(stall, duration)"]),
    el("span", null, [el("b", { style: "background:var(--stall)" }), "stall"]),
    el("span", null, [el("b", { style: "background:var(--idle)" }), "idle: wave waiting between instructions"]),
    el("span", null, [el("b", { style: "background:var(--exp)" }), "exposed: latency + idle not hidden by other busy pipes of the SIMD"])]);

  // Kernels.
  main.appendChild(el("h2", { text: "Kernels" }));
  var kcols = [["Kernel", "name", false], ["Waves", "waves", true], ["Instructions", "instructions", true], ["Wave cycles", "cycles", true],
    ["Mean wave", "mean_wave", true], ["Latency", "latency", true], ["Stall", "stall", true], ["Idle", "idle", true], ["Exposed", "exposed", true]];
  var ktable = el("table", { cls: "grid", id: "kernels" });
  var khead = el("tr");
  var kbody = el("tbody");
  var korder = D.kernels.map(function (k, i) { return i; });
  var ksort = { col: 8, dir: -1 };
  kcols.forEach(function (c, ci) {
    khead.appendChild(el("th", { cls: c[2] ? "" : "l", text: c[0], onclick: function () {
      ksort = { col: ci, dir: ksort.col === ci ? -ksort.dir : (c[2] ? -1 : 1) }; drawKernels();
    } }));
  });
  ktable.appendChild(el("thead", null, [khead]));
  ktable.appendChild(kbody);
  main.appendChild(ktable);
  var selected = -1;
  function drawKernels() {
    var key = kcols[ksort.col][1];
    korder.sort(function (a, b) {
      var x = D.kernels[a][key], y = D.kernels[b][key];
      if (x < y) return -ksort.dir; if (x > y) return ksort.dir; return a - b;
    });
    Array.prototype.forEach.call(khead.children, function (th, ci) { th.classList.toggle("asc", ci === ksort.col && ksort.dir > 0); th.classList.toggle("desc", ci === ksort.col && ksort.dir < 0); });
    kbody.textContent = "";
    korder.forEach(function (ki) {
      var k = D.kernels[ki];
      var tr = el("tr", { cls: ki === selected ? "sel" : "", onclick: function () { select(ki); } });
      kcols.forEach(function (c) { tr.appendChild(el("td", { cls: c[2] ? "" : "l kname", text: c[2] ? num(k[c[1]]) : k[c[1]] })); });
      kbody.appendChild(tr);
    });
  }

  // Hottest instructions, all kernels.
  main.appendChild(el("h2", { text: "Hottest instructions (by exposed cycles)" }));
  var hot = el("table", { cls: "grid", id: "hot" });
  hot.appendChild(el("thead", null, [el("tr", null, ["#", "Kernel", "Address", "Instruction", "Hits", "Latency", "Stall", "Idle", "Exposed", "Source"].map(function (h, i) {
    return el("th", { cls: (i === 1 || i === 3 || i === 9) ? "l" : "", text: h });
  }))]));
  var hotBody = el("tbody");
  hot.appendChild(hotBody);
  function kernelOfPC(i) {
    for (var k = 0; k < D.kernels.length; k++) { var K = D.kernels[k]; if (i >= K.first && i < K.first + K.count) return k; }
    return -1;
  }
  D.top.slice(0, 10).forEach(function (i, rank) {
    var k = kernelOfPC(i);
    var tr = el("tr", { onclick: function () { select(k, i); } }, [
      el("td", { text: String(rank + 1) }), el("td", { cls: "l", text: k >= 0 ? D.kernels[k].name : "" }), el("td", { cls: "t", text: hex(I.addr[i]) }),
      el("td", { cls: "l t", text: I.text[i] }), el("td", { text: num(I.hit[i]) }), el("td", { text: num(I.latency[i]) }),
      el("td", { text: num(I.stall[i]) }), el("td", { text: num(I.idle[i]) }), el("td", { text: num(I.exposed[i]) }),
      el("td", { cls: "l t src", text: I.src[i] >= 0 ? I.srcs[I.src[i]] : "" })]);
    tr.addEventListener("mousemove", function (ev) { showTip(ev, chainText(i)); });
    tr.addEventListener("mouseleave", function () { showTip(null, ""); });
    hotBody.appendChild(tr);
  });
  if (!D.top.length) hotBody.appendChild(el("tr", null, [el("td", { cls: "l empty", colspan: "10", text: "no instruction executed" })]));
  main.appendChild(hot);

  // The selected kernel.
  var ksec = el("section", { id: "kernel" });
  main.appendChild(ksec);
  var ktitle = el("h2");
  var cards = el("div", { cls: "cards" });
  ksec.appendChild(ktitle);
  ksec.appendChild(cards);
  ksec.appendChild(legend);

  var isa = new VList("isa", [
    { name: "Address", value: function (r) { return hex(I.addr[r]); }, sort: function (r) { return I.addr[r]; }, cls: "t" },
    { name: "Instruction", value: function (r) { return I.text[r]; }, sort: function (r) { return I.text[r]; }, cls: "t" },
    barCol("Hits", "c-hit", I.hit), barCol("Latency", "c-lat", I.latency), barCol("Stall", "c-stall", I.stall),
    barCol("Idle", "c-idle", I.idle), barCol("Exposed", "c-exp", I.exposed)], 18);
  isa.onrow = function (d, r) {
    d.addEventListener("mousemove", function (ev) { showTip(ev, chainText(r)); });
    d.addEventListener("mouseleave", function () { showTip(null, ""); });
    d.addEventListener("click", function () { if (I.line[r] >= 0) { pickLine(I.line[r], false); } });
  };
  var selPC = -1, selLine = -1;
  isa.rowClass = function (r) { return (r === selPC ? " sel" : "") + (I.hit[r] ? "" : " dim"); };

  // Source rows: per line of the file shown, a line index (>= 0) or, for a
  // line without instructions, -1 - text line number.
  var srcRows = [];
  function lineVal(arr) { return function (r) { return r >= 0 ? arr[r] : null; }; }
  function lineSort(arr) { return function (r) { return r >= 0 ? arr[r] : -1; }; }
  function lineBar(name, key, arr) { return { name: name, key: key, bar: arr, num: true, value: lineVal(arr), sort: lineSort(arr) }; }
  var src = new VList("src", [
    { name: "Line", value: function (r) { return String(r >= 0 ? L.line[r] : -1 - r); }, sort: function (r) { return r >= 0 ? L.line[r] : -1 - r; }, cls: "t" },
    lineBar("Latency", "c-lat", L.latency), lineBar("Stall", "c-stall", L.stall), lineBar("Idle", "c-idle", L.idle), lineBar("Exposed", "c-exp", L.exposed),
    { name: "Source", value: textOf, sort: textOf, cls: "t" }], 18);
  src.row = (function (orig) {
    return function (r, i) {
      var d = orig.call(this, r, i);
      var t = textOf(r);
      d.lastChild.textContent = t;
      d.lastChild.style.whiteSpace = "pre";
      if (r < 0) d.classList.add("dim");
      if (r >= 0 && r === selLine) d.classList.add("sel");
      if (r >= 0) d.addEventListener("click", function () { pickLine(r, true); });
      return d;
    };
  })(src.row);
  var fileText = {}; // row -> text, for the file shown
  function textOf(r) { return fileText[r] != null ? fileText[r] : ""; }

  var fileSel = el("select");
  var srcNote = el("span", { cls: "note" });
  var isaNote = el("span", { cls: "note" });
  var showAll = el("button", { text: "all instructions", onclick: function () { selLine = -1; showISA(null); src.draw(true); } });
  var panes = el("div", { cls: "panes" }, [
    el("div", { cls: "pane", id: "source" }, [el("div", { cls: "bar" }, [el("b", { text: "Source" }), fileSel, srcNote]), src.node]),
    el("div", { cls: "pane", id: "isa" }, [el("div", { cls: "bar" }, [el("b", { text: "ISA" }), showAll, isaNote]), isa.node])]);
  ksec.appendChild(panes);

  var lower = el("div", { cls: "charts" });
  ksec.appendChild(lower);
  var histBox = el("div", { cls: "chart", id: "hist" });
  lower.appendChild(histBox);

  var cur = -1, kfiles = [];
  fileSel.addEventListener("change", function () { showFile(+fileSel.value); });

  function showFile(fi) {
    var K = D.kernels[cur], F = D.files[fi];
    var mine = [];
    for (var l = K.line_first; l < K.line_first + K.line_count; l++) if (L.file[l] === fi) mine.push(l);
    fileText = {};
    srcRows = [];
    if (F.found) {
      var byLine = {};
      mine.forEach(function (l) { byLine[L.line[l]] = l; });
      for (var n = 1; n <= F.text.length; n++) {
        var r = byLine[n] != null ? byLine[n] : -1 - n;
        srcRows.push(r);
        fileText[r] = F.text[n - 1];
      }
      mine.forEach(function (l) { if (L.line[l] < 1 || L.line[l] > F.text.length) { srcRows.push(l); fileText[l] = ""; } });
      srcNote.textContent = F.path;
    } else {
      mine.sort(function (a, b) { return L.line[a] - L.line[b]; });
      srcRows = mine;
      mine.forEach(function (l) { fileText[l] = F.path + ":" + L.line[l]; });
      srcNote.textContent = F.path + " (source not found: pass --source-dir)";
    }
    src.set(srcRows);
    var first = -1;
    mine.forEach(function (l) { if (first < 0 || L.exposed[l] > L.exposed[first]) first = l; });
    if (first >= 0 && F.found) src.scrollTo(first);
  }

  function showISA(line) {
    var K = D.kernels[cur], rows = [];
    for (var i = K.first; i < K.first + K.count; i++) if (line == null || I.line[i] === line) rows.push(i);
    isa.set(rows, true);
    isaNote.textContent = line == null ? (rows.length.toLocaleString("en-US") + " instructions") :
      (rows.length + " instructions of line " + L.line[line]);
  }

  function pickLine(l, fromSource) {
    selLine = l;
    if (fromSource) { showISA(l); } else {
      var fi = L.file[l];
      if (+fileSel.value !== fi) { fileSel.value = String(fi); showFile(fi); }
      src.scrollTo(l);
    }
    src.draw(true);
    isa.draw(true);
  }

  function card(k, v) { return el("div", { cls: "card" }, [el("div", { cls: "k", text: k }), el("div", { cls: "v", text: v })]); }

  function select(ki, pc) {
    if (ki < 0) return;
    selected = cur = ki;
    drawKernels();
    var K = D.kernels[ki];
    ktitle.textContent = "Kernel " + K.name;
    cards.textContent = "";
    [["Waves", num(K.waves)], ["Instructions", num(K.instructions)], ["Wave cycles", num(K.cycles)],
      ["Wave min / mean / max", num(K.min_wave) + " / " + num(K.mean_wave) + " / " + num(K.max_wave)],
      ["Latency", num(K.latency)], ["Stall", num(K.stall)], ["Idle", num(K.idle)], ["Hidden", num(K.hidden)],
      ["Exposed", num(K.exposed)], ["PCs", num(K.count)]].forEach(function (c) { cards.appendChild(card(c[0], c[1])); });
    // files of the kernel, most exposed first
    var per = {};
    for (var l = K.line_first; l < K.line_first + K.line_count; l++) per[L.file[l]] = (per[L.file[l]] || 0) + L.exposed[l] + 1;
    kfiles = Object.keys(per).map(Number).sort(function (a, b) { return per[b] - per[a]; });
    fileSel.textContent = "";
    kfiles.forEach(function (fi) { fileSel.appendChild(el("option", { value: String(fi), text: D.files[fi].path })); });
    selLine = -1; selPC = pc == null ? -1 : pc;
    if (kfiles.length) showFile(kfiles[0]); else { src.set([]); srcNote.textContent = "no source lines in the index"; }
    showISA(null);
    if (pc != null) isa.scrollTo(pc);
    drawHist(K);
  }

  // The wave-duration histogram of a kernel.
  function drawHist(K) {
    histBox.textContent = "";
    histBox.appendChild(el("h3", { text: "Wave durations of " + K.name + " (cycles, " + num(K.waves) + " waves)" }));
    var H = K.hist || [];
    if (K.negative_waves) histBox.appendChild(el("div", { cls: "empty", text: num(K.negative_waves) + " cut waves (end before begin) not binned" }));
    if (!H.length) { histBox.appendChild(el("div", { cls: "empty", text: "no waves" })); return; }
    var W = 540, Ht = 180, c = el("canvas", { width: String(W), height: String(Ht) });
    histBox.appendChild(c);
    var counts = H.map(function (b) { return b.count; });
    var g = c.getContext("2d"), n = H.length, m = Math.max.apply(null, counts), pad = 30, bw = (W - pad - 6) / n;
    g.fillStyle = "#fff"; g.fillRect(0, 0, W, Ht);
    g.strokeStyle = "#dde1e8"; g.beginPath(); g.moveTo(pad, 6); g.lineTo(pad, Ht - 28); g.lineTo(W - 4, Ht - 28); g.stroke();
    g.fillStyle = "#4f7fd9";
    counts.forEach(function (v, i) {
      var h = (Ht - 40) * v / m;
      g.fillRect(pad + i * bw + 1, Ht - 28 - h, Math.max(1, bw - 2), h);
    });
    g.fillStyle = "#6b7385"; g.font = "10px sans-serif";
    g.fillText(num(m), 2, 14); g.fillText("0", 2, Ht - 30);
    var step = Math.max(1, Math.ceil(n / 8));
    for (var i = 0; i < n; i += step) g.fillText(num(H[i].lo), pad + i * bw, Ht - 12);
    c.title = H.map(function (b) { return "[" + num(b.lo) + ", " + num(b.hi) + "): " + b.count + " waves"; }).join("\n");
  }

  // Waves in flight per shader engine.
  main.appendChild(el("h2", { text: "Occupancy: waves in flight per shader engine" }));
  var occ = el("div", { cls: "charts", id: "occupancy" });
  main.appendChild(occ);
  if (!D.ses.length) occ.appendChild(el("div", { cls: "empty", text: "no shader engine in the input" }));
  D.ses.forEach(function (s) {
    var box = el("div", { cls: "chart" });
    box.appendChild(el("h3", { text: "SE " + s.se + ", run " + s.run + " \u00b7 " + num(s.waves) + " traced waves \u00b7 peak " + num(s.peak) + " (from " + s.source + ")" }));
    var W = 540, Ht = 130, c = el("canvas", { width: String(W), height: String(Ht) });
    box.appendChild(c);
    occ.appendChild(box);
    var g = c.getContext("2d"), n = s.avg.length, pad = 30, m = Math.max(1, s.peak);
    g.fillStyle = "#fff"; g.fillRect(0, 0, W, Ht);
    g.strokeStyle = "#dde1e8"; g.beginPath(); g.moveTo(pad, 6); g.lineTo(pad, Ht - 24); g.lineTo(W - 4, Ht - 24); g.stroke();
    if (n) {
      g.fillStyle = "rgba(58,161,126,.45)"; g.strokeStyle = "#3aa17e"; g.beginPath();
      var x = function (i) { return pad + (W - pad - 6) * i / n; }, y = function (v) { return Ht - 24 - (Ht - 34) * v / m; };
      g.moveTo(x(0), y(0));
      for (var i = 0; i < n; i++) { g.lineTo(x(i), y(s.avg[i])); g.lineTo(x(i + 1), y(s.avg[i])); }
      g.lineTo(x(n), y(0)); g.closePath(); g.fill(); g.stroke();
    }
    g.fillStyle = "#6b7385"; g.font = "10px sans-serif";
    g.fillText(num(m), 2, 14); g.fillText("0", 2, Ht - 26);
    g.fillText(num(s.t0), pad, Ht - 8);
    var end = num(s.t0 + s.width * n) + " (cycles)";
    g.fillText(end, W - 6 - g.measureText(end).width, Ht - 8);
  });

  drawKernels();
  var first = -1;
  D.kernels.forEach(function (k, i) { if (first < 0 || k.exposed > D.kernels[first].exposed) first = i; });
  if (first >= 0) select(first); else ksec.appendChild(el("div", { cls: "empty", text: "no kernel" }));
  document.body.setAttribute("data-ready", "1");
})();
