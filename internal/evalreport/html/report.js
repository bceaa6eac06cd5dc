
(function () {
  "use strict";
  var blob = document.getElementById("grid-data"), table = document.getElementById("grid");
  if (!blob || !table) return;
  var data = JSON.parse(blob.textContent), models = data.models, pairs = data.pairs, items = [];
  // With repeats, a result is a model's cell of an item: its verdict,
  // mean score, mean latency, summed cost, cached and passed repeats, and
  // the repeats themselves at [8], each [repeat, state, score, latency, cost, cached, text, reasons, finish],
  // and their finish at [9]. Without, a result's finish is at [9] too.
  var repeated = data.repeated === true;
  data.results.forEach(function (r) {
    var it = items[r[0]];
    if (!it) it = items[r[0]] = {n: r[0], id: r[10], prompt: r[11], expected: r[12], res: [], text: null};
    it.res[r[1]] = r;
  });
  var body = table.tBodies[0], wrap = document.getElementById("gridwrap"), sentinel = document.getElementById("sentinel");
  var moreButton = document.getElementById("more"), q = document.getElementById("q"), filter = document.getElementById("filter");
  var count = document.getElementById("count"), chip = document.getElementById("pairchip"), chipText = document.getElementById("pairtext");
  var FILTERS = {all: 1, failed: 1, disagree: 1, errors: 1, finish: 1}, STATES = ["pass", "fail", "error"], PAGE = 100;
  var FIELDS = {result: 2, score: 3, latency: 4, cost: 5}, TEXTS = {item: "id", prompt: "prompt", expected: "expected"};
  if (repeated) FILTERS.repeats = 1;
  var everyModel = models.map(function (_, i) { return i; });
  var state = {}, view = [], shown = 0, collator = new Intl.Collator(undefined, {numeric: true});

  // The fragment holds the view, so that a link can open one:
  // #filter=disagree&pair=0&q=paris&sort=m1.latency&desc=1
  function readHash() {
    var p = new URLSearchParams(location.hash.replace(/^#/, ""));
    var k = parseInt(p.get("pair"), 10);
    state = {filter: FILTERS.hasOwnProperty(p.get("filter")) ? p.get("filter") : "all", q: p.get("q") || "",
      pair: k >= 0 && pairs[k] ? k : -1, sort: p.get("sort") || "", desc: p.get("desc") === "1"};
    if (state.filter !== "disagree") state.pair = -1;
  }
  function writeHash() {
    var p = new URLSearchParams();
    if (state.filter !== "all") p.set("filter", state.filter);
    if (state.pair >= 0) p.set("pair", state.pair);
    if (state.q) p.set("q", state.q);
    if (state.sort) p.set("sort", state.sort);
    if (state.desc) p.set("desc", "1");
    var s = p.toString();
    try { history.replaceState(null, "", s ? "#" + s : location.pathname + location.search); } catch (e) { /* a viewer that forbids it keeps the old URL */ }
  }

  function stateOf(it, m) { var r = it.res[m]; return r ? r[2] : -1; }
  function any(it, test) {
    for (var m = 0; m < models.length; m++) { var s = stateOf(it, m); if (s >= 0 && test(s)) return true; }
    return false;
  }
  // Models disagree when one passed and another did not; a model without
  // a result for the item has no say, and errors count as failures. With
  // repeats these are the item verdicts, the ones the pairs count.
  function disagree(it, ms) {
    var passed = false, not = false;
    ms.forEach(function (m) { var s = stateOf(it, m); if (s === 0) passed = true; else if (s > 0) not = true; });
    return passed && not;
  }
  // Repeats disagree when one passed and another did not, as in the
  // report's count of them: an errored repeat did not pass.
  function repeatsDisagree(it) {
    return it.res.some(function (r) { return r && r[7] > 0 && r[7] < r[8].length; });
  }
  // With repeats, one errored repeat is enough to list the item: a
  // model's cell is an error only when all of them were, and the errors
  // are what this filter is for finding.
  function erred(it) {
    if (!repeated) return any(it, function (s) { return s === 2; });
    return it.res.some(function (r) { return r && r[8].some(function (x) { return x[1] === 2; }); });
  }
  function text(it) {
    if (it.text === null) {
      var parts = [it.id, it.prompt, it.expected];
      it.res.forEach(function (r) {
        if (r && repeated) r[8].forEach(function (x) { parts.push(x[6], x[7], x[8]); });
        else if (r) parts.push(r[7], r[8], r[9]);
      });
      it.text = parts.join("\n").toLowerCase();
    }
    return it.text;
  }
  function keep(it) {
    if (state.filter === "failed" && !any(it, function (s) { return s > 0; })) return false;
    if (state.filter === "errors" && !erred(it)) return false;
    if (state.filter === "finish" && !it.res.some(function (r) { return r && r[9]; })) return false;
    if (state.filter === "repeats" && !repeatsDisagree(it)) return false;
    if (state.filter === "disagree" && !disagree(it, state.pair >= 0 ? pairs[state.pair] : everyModel)) return false;
    return !state.q || text(it).indexOf(state.q.toLowerCase()) >= 0;
  }
  // compare orders items by a column; a model's missing result or number
  // goes last either way.
  function compare(spec, dir) {
    var m = /^m(\d+)\.(\w+)$/.exec(spec);
    if (m && +m[1] < models.length && FIELDS.hasOwnProperty(m[2])) {
      var col = +m[1], f = FIELDS[m[2]];
      return function (a, b) {
        var x = a.res[col] ? a.res[col][f] : null, y = b.res[col] ? b.res[col][f] : null;
        if (x === null || y === null) return (x === null) - (y === null) || a.n - b.n;
        return (x - y) * dir || a.n - b.n;
      };
    }
    var t = TEXTS.hasOwnProperty(spec) && TEXTS[spec];
    return t ? function (a, b) { return collator.compare(a[t], b[t]) * dir || a.n - b.n; } : null;
  }

  function el(tag, cls, content) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (content !== undefined) e.textContent = content;
    return e;
  }
  function textCell(cls, content) { var td = el("td", cls); td.appendChild(el("div", "text", content)); return td; }
  function millis(ms) { return ms === null ? "–" : ms < 999.5 ? ms.toFixed(0) + " ms" : (ms / 1000).toFixed(1) + " s"; }
  function dollars(usd) {
    if (usd === null) return "–";
    var d = 4;
    while (usd !== 0 && Math.abs(usd) * Math.pow(10, d) < 9.95 && d < 8) d++;
    return "$" + usd.toFixed(d);
  }
  function numbers(f, o) { return (f[o] === null ? "–" : f[o].toFixed(2)) + " · " + millis(f[o + 1]) + " · " + dollars(f[o + 2]); }
  function badge(head, cls, content) { head.appendChild(document.createTextNode(" ")); head.appendChild(el("span", "badge " + cls, content)); }
  function cachedBadge(head, content) { badge(head, "cached", content); }
  // fill writes a result into box: f holds its state at o, then score,
  // latency, cost, cached, text, reasons and finish; label (a repeat's)
  // goes first.
  function fill(box, f, o, label) {
    var s = STATES[f[o]], head = el("div", "head"), line = f[o] !== 2 ? numbers(f, o + 1) : "";
    if (label) line = label + (line ? " · " + line : "");
    head.appendChild(el("span", "badge " + s, s));
    if (f[o + 7]) badge(head, "finish", f[o + 7]);
    if (line) head.appendChild(document.createTextNode(" " + line));
    if (f[o + 4]) cachedBadge(head, "cached");
    box.appendChild(head);
    box.appendChild(el("div", f[o] === 2 ? "text err" : "text", f[o + 5]));
    if (f[o + 6]) box.appendChild(el("div", "why", f[o + 6]));
  }
  function repeatedCell(r) {
    var s = STATES[r[2]], td = el("td", "r " + s), head = el("div", "head"), n = r[8].length;
    head.appendChild(el("span", "badge " + s, s));
    if (r[9]) badge(head, "finish", r[9]);
    head.appendChild(document.createTextNode(" " + r[7] + "/" + n + " passed" + (r[2] !== 2 ? " · " + numbers(r, 3) : "")));
    if (r[6]) cachedBadge(head, r[6] === n ? "cached" : r[6] + "/" + n + " cached");
    td.appendChild(head);
    var details = el("details"), list = el("ol", "repeats");
    details.appendChild(el("summary", "", n + " repeats"));
    r[8].forEach(function (x) {
      var li = el("li", STATES[x[1]]);
      fill(li, x, 1, "#" + x[0]);
      list.appendChild(li);
    });
    details.appendChild(list);
    td.appendChild(details);
    return td;
  }
  function row(it) {
    var tr = el("tr", "item");
    tr.setAttribute("data-n", it.n);
    tr.appendChild(textCell("id", it.id));
    tr.appendChild(textCell("prompt", it.prompt));
    tr.appendChild(textCell("expected", it.expected));
    for (var m = 0; m < models.length; m++) {
      var r = it.res[m];
      if (!r) { tr.appendChild(el("td", "r none", "–")); continue; }
      if (repeated) { tr.appendChild(repeatedCell(r)); continue; }
      var td = el("td", "r " + STATES[r[2]]);
      fill(td, r, 2);
      tr.appendChild(td);
    }
    return tr;
  }

  // Rows are built a page at a time, as the end of the grid comes near.
  function more() {
    var end = Math.min(shown + PAGE, view.length), frag = document.createDocumentFragment();
    for (; shown < end; shown++) frag.appendChild(row(view[shown]));
    body.appendChild(frag);
    moreButton.hidden = shown >= view.length;
  }
  var observer = new IntersectionObserver(function (entries) {
    if (entries[entries.length - 1].isIntersecting && shown < view.length) {
      more();
      // Observing again reports the sentinel afresh: still in reach, another page.
      observer.unobserve(sentinel);
      observer.observe(sentinel);
    }
  }, {root: wrap, rootMargin: "600px"});

  function apply() {
    view = items.filter(keep);
    var cmp = compare(state.sort, state.desc ? -1 : 1);
    if (cmp) view.sort(cmp);
    body.textContent = "";
    shown = 0;
    wrap.scrollTop = 0;
    more();
    observer.unobserve(sentinel);
    observer.observe(sentinel);
    count.textContent = view.length + " of " + items.length + " items";
    table.setAttribute("data-view", view.length);
    filter.value = state.filter;
    if (q.value !== state.q) q.value = state.q;
    chip.hidden = state.pair < 0;
    if (state.pair >= 0) chipText.textContent = models[pairs[state.pair][0]] + " and " + models[pairs[state.pair][1]];
    // The sort comes from the URL: compared, never put into a selector.
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      var on = false;
      var controls = th.hasAttribute("data-sort") ? [th] : Array.prototype.slice.call(th.querySelectorAll("button[data-sort]"));
      controls.forEach(function (c) {
        var mine = c.getAttribute("data-sort") === state.sort;
        on = on || mine;
        if (c.tagName === "BUTTON") c.setAttribute("aria-pressed", mine);
      });
      if (on) th.setAttribute("aria-sort", state.desc ? "descending" : "ascending");
      else th.removeAttribute("aria-sort");
    });
  }
  function change() { writeHash(); apply(); }

  // A sort button for each of a model's numbers, under its name.
  Array.prototype.forEach.call(table.tHead.querySelectorAll("th.model"), function (th, m) {
    var line = el("div");
    ["result", "score", "latency", "cost"].forEach(function (f) {
      var b = el("button", "", f);
      b.type = "button";
      b.setAttribute("data-sort", "m" + m + "." + f);
      line.appendChild(b);
    });
    th.appendChild(line);
  });
  Array.prototype.forEach.call(table.tHead.querySelectorAll("th[data-sort]"), function (th) { th.tabIndex = 0; });
  function sortBy(target) {
    var c = target.closest("[data-sort]");
    if (!c) return;
    var spec = c.getAttribute("data-sort");
    state.desc = state.sort === spec ? !state.desc : false;
    state.sort = spec;
    change();
  }
  table.tHead.addEventListener("click", function (ev) { sortBy(ev.target); });
  table.tHead.addEventListener("keydown", function (ev) { if (ev.key === "Enter" && ev.target.tagName === "TH") sortBy(ev.target); });
  filter.addEventListener("change", function () { state.filter = filter.value; state.pair = -1; change(); });
  document.getElementById("pairclear").addEventListener("click", function () { state.pair = -1; change(); });
  var typing = 0;
  q.addEventListener("input", function () {
    clearTimeout(typing);
    typing = setTimeout(function () { state.q = q.value.trim(); change(); }, 150);
  });
  moreButton.addEventListener("click", more);
  window.addEventListener("hashchange", function () {
    readHash();
    apply();
    document.getElementById("items").scrollIntoView();
  });

  Array.prototype.forEach.call(document.querySelectorAll(".nojs"), function (n) { n.hidden = true; });
  document.getElementById("controls").hidden = false;
  readHash();
  apply();
})();
