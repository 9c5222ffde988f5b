"""The inline style and scripts of the HTML report (no file, font or script is fetched).

* :data:`ERROR_TRAP` runs first (in ``<head>``): every uncaught error and every
  ``console.error`` is also written into ``<pre id="page-errors">`` (shown when not empty), so a
  headless browser's DOM dump tells whether the page ran cleanly.
* :data:`BROWSER` runs last: the event browser's filters.  Each ``section.case`` carries
  ``data-system``, ``data-task``, ``data-verdict`` and ``data-miss``; a case is shown when every
  filter is empty or equal to its value.  The filters are also read from the URL fragment
  (``index.html#system=cascade&verdict=fail``: a link to a selection, and the way the headless
  test drives them), and the count of shown cases is written into ``#shown-count``.  When done,
  ``<body data-ready="1">``.
"""

from __future__ import annotations

__all__ = ["BROWSER", "ERROR_TRAP", "FILTERS", "STYLE"]

FILTERS = ("system", "task", "verdict", "miss")
"""The filter names: ``data-*`` attributes of a case and ids ``f-*`` of the selects."""

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; max-width: 1200px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
table.results { border-collapse: collapse; font-size: 0.82em; margin: 0.5em 0; }
table.results th, table.results td { border: 1px solid #ccc; padding: 3px 6px; }
table.results td.num { text-align: right; white-space: nowrap; }
p.values { font-size: 0.82em; margin: 0.2em 0; }
.notes { font-size: 0.8em; color: #555; }
.figures img { max-width: 100%; margin: 0.3em 0.6em 0.3em 0; vertical-align: top; }
#filters { position: sticky; top: 0; background: #f7f7f7; padding: 0.5em; border: 1px solid #ddd;
           z-index: 2; }
#filters label { margin-right: 1em; font-size: 0.9em; }
section.case { border: 1px solid #ddd; border-left: 6px solid #999; padding: 0.4em 0.8em;
               margin: 0.7em 0; }
section.case[data-verdict="pass"] { border-left-color: #2ca02c; }
section.case[data-verdict="fail"] { border-left-color: #d62728; }
section.case h3 { font-size: 0.95em; margin: 0.2em 0; }
section.case img.timeline { width: 100%; max-width: 760px; display: block; }
section.case audio { width: 100%; max-width: 760px; }
.muted { color: #777; font-size: 0.85em; }
.transcript { font-size: 0.85em; margin: 0.2em 0; }
.transcript .who { font-weight: bold; display: inline-block; min-width: 4.5em; }
pre.compare { font-size: 0.75em; background: #f7f7f7; padding: 0.5em; overflow-x: auto; }
#page-errors { color: #b00; background: #fee; padding: 0.5em; }
"""

ERROR_TRAP = """
(function () {
  function note(text) {
    var box = document.getElementById("page-errors");
    if (!box) { (window.__pendingErrors = window.__pendingErrors || []).push(text); return; }
    box.hidden = false;
    box.textContent += text + "\\n";
  }
  window.__noteError = note;
  window.addEventListener("error", function (e) {
    note("error: " + (e.message || (e.target && e.target.src) || "resource failed"));
  }, true);
  window.addEventListener("unhandledrejection", function (e) { note("rejection: " + e.reason); });
  var original = console.error;
  console.error = function () {
    note("console.error: " + Array.prototype.join.call(arguments, " "));
    return original.apply(console, arguments);
  };
})();
"""

BROWSER = """
(function () {
  var names = %(filters)s;
  var pending = window.__pendingErrors || [];
  pending.forEach(function (t) { window.__noteError(t); });
  function selects() {
    return names.map(function (n) { return document.getElementById("f-" + n); });
  }
  function apply() {
    var chosen = selects().map(function (s) { return s ? s.value : ""; });
    var cases = document.querySelectorAll("section.case");
    var shown = 0;
    cases.forEach(function (c) {
      var ok = names.every(function (n, i) {
        return chosen[i] === "" || c.getAttribute("data-" + n) === chosen[i];
      });
      c.hidden = !ok;
      if (ok) { shown += 1; }
    });
    document.getElementById("shown-count").textContent =
      shown + " of " + cases.length + " events shown";
  }
  function fromHash() {
    var text = decodeURIComponent(window.location.hash.replace(/^#/, ""));
    text.split("&").forEach(function (part) {
      var kv = part.split("=");
      var s = document.getElementById("f-" + kv[0]);
      if (s && kv.length === 2) { s.value = kv[1]; }
    });
  }
  selects().forEach(function (s) { if (s) { s.addEventListener("change", apply); } });
  window.addEventListener("hashchange", function () { fromHash(); apply(); });
  fromHash();
  apply();
  document.body.setAttribute("data-ready", "1");
})();
"""
