/* Jäger report — shared helpers. Program data is only ever put into the page with
 * textContent or canvas fillText: never innerHTML. */
'use strict';
var J = {};

/** Create an element with a class and text (text goes through textContent). */
J.el = function (tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
};

/** "1.23 ms", "850 ns", "2.50 s". */
J.fmtNs = function (ns) {
  if (!isFinite(ns)) return '–';
  var a = Math.abs(ns);
  if (a < 1e3) return ns.toFixed(0) + ' ns';
  if (a < 1e6) return (ns / 1e3).toFixed(a < 1e4 ? 2 : 1) + ' µs';
  if (a < 1e9) return (ns / 1e6).toFixed(a < 1e7 ? 2 : 1) + ' ms';
  if (a < 600e9) return (ns / 1e9).toFixed(a < 1e10 ? 3 : 2) + ' s';
  return (ns / 60e9).toFixed(1) + ' min';
};

J.fmtBytes = function (b) {
  if (!isFinite(b)) return '–';
  var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
  while (Math.abs(b) >= 1024 && i < u.length - 1) { b /= 1024; i++; }
  return (i ? b.toFixed(b < 10 ? 2 : 1) : b.toFixed(0)) + ' ' + u[i];
};

J.fmtInt = function (n) {
  if (!isFinite(n)) return '–';
  return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, '\u2009');
};

/** A legend entry's text: "MPI message (2 500 of 5 000 drawn)" when some were left out,
 * "MPI message (5 000)" when all were drawn. x: {n, drawn} of the data. */
J.drawnLabel = function (what, x) {
  return what + (x.drawn < x.n ? ' (' + J.fmtInt(x.drawn) + ' of ' + J.fmtInt(x.n) + ' drawn)' : ' (' + J.fmtInt(x.n) + ')');
};

J.fmtPct = function (f) { return isFinite(f) ? (f * 100).toFixed(f < 0.1 ? 1 : 0) + ' %' : '–'; };

/** Stable colour for a site from a palette of calm blues, teals, greens and sands:
 * orange stays reserved for GC pauses, violet for compiles, pink for search hits. */
J.PALETTE = ['#8fbce6', '#7fcdc4', '#a8d5a2', '#e9d18c', '#a7c4ef', '#93d0b4', '#c9dea0', '#b9cde6',
  '#86c5da', '#d8e2a4', '#9fb8d8', '#a4dcc8', '#e3c99a', '#b3d7e8', '#bfe0b5', '#c3c9ea'];
J.siteColor = (function () {
  var cache = [];
  return function (site) {
    var c = cache[site];
    if (c) return c;
    /* by name, so that one function has one colour in every process of the page */
    var s = J.data && J.data.sites && J.data.sites[site], h = 2166136261;
    if (s) for (var i = 0; i < s[0].length; i++) h = Math.imul(h ^ s[0].charCodeAt(i), 16777619);
    else h = Math.imul(site + 1, 2654435761);
    c = J.PALETTE[((h >>> 0) >>> 7) % J.PALETTE.length];
    cache[site] = c;
    return c;
  };
})();

/** Undo the per-array delta encoding the C side uses for sorted start times. */
J.undelta = function (a) {
  var out = new Float64Array(a.length), acc = 0;
  for (var i = 0; i < a.length; i++) { acc += a[i]; out[i] = acc; }
  return out;
};

/** Largest i with a[i] <= x (or -1): a is sorted ascending. */
J.upperIndex = function (a, x) {
  var lo = 0, hi = a.length;
  while (lo < hi) { var mid = (lo + hi) >>> 1; if (a[mid] <= x) lo = mid + 1; else hi = mid; }
  return lo - 1;
};

/** Shared tooltip: lines of [label, value] or plain strings, set with textContent. */
J.tip = (function () {
  var node = null;
  function show(x, y, title, lines) {
    if (!node) node = document.getElementById('tooltip');
    while (node.firstChild) node.removeChild(node.firstChild);
    node.appendChild(J.el('b', null, title));
    for (var i = 0; i < lines.length; i++) node.appendChild(document.createTextNode('\n' + lines[i]));
    node.hidden = false;
    var w = node.offsetWidth, h = node.offsetHeight;
    var px = x + 14, py = y + 14;
    if (px + w > window.innerWidth - 4) px = Math.max(4, x - w - 14);
    if (py + h > window.innerHeight - 4) py = Math.max(4, y - h - 14);
    node.style.left = px + 'px';
    node.style.top = py + 'px';
  }
  function hide() { if (!node) node = document.getElementById('tooltip'); node.hidden = true; }
  return { show: show, hide: hide };
})();

/** Size a canvas to its CSS box at the device pixel ratio; returns the 2D context (CSS px units). */
J.fitCanvas = function (canvas, cssHeight) {
  var dpr = window.devicePixelRatio || 1;
  var w = canvas.parentNode.clientWidth;
  canvas.style.height = cssHeight + 'px';
  canvas.width = Math.max(1, Math.round(w * dpr));
  canvas.height = Math.max(1, Math.round(cssHeight * dpr));
  var ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return { ctx: ctx, w: w, h: cssHeight };
};

/** Cut \p text to fit \p maxW pixels in ctx's font, with an ellipsis; '' if nothing fits. */
J.fitText = function (ctx, text, maxW) {
  if (maxW < 8) return '';
  if (ctx.measureText(text).width <= maxW) return text;
  var lo = 0, hi = text.length;
  while (lo < hi) {
    var mid = (lo + hi + 1) >>> 1;
    if (ctx.measureText(text.slice(0, mid) + '…').width <= maxW) lo = mid; else hi = mid - 1;
  }
  return lo > 0 ? text.slice(0, lo) + '…' : '';
};

/** A ruler label for time \p t on a grid of \p step ns: enough decimals to tell ticks apart. */
J.fmtTick = function (t, step) {
  var a = Math.max(Math.abs(t), step), units = [[1e9, ' s'], [1e6, ' ms'], [1e3, ' µs'], [1, ' ns']], u = units[3];
  for (var i = 0; i < units.length; i++) if (a >= units[i][0]) { u = units[i]; break; }
  var dec = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step / u[0]) - 1e-9)));
  return (t / u[0]).toFixed(dec) + u[1];
};

/** Nice tick step for a range of \p span units showing about \p n ticks. */
J.tickStep = function (span, n) {
  var raw = span / Math.max(1, n), p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
};
