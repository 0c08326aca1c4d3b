/* gavel report: filters and paging for the galleries. Every text from data or models is put
   into the page with textContent, never parsed as HTML. No network access of any kind. */
(function () {
  "use strict";

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function num(value) {
    if (typeof value !== "number" || !isFinite(value)) return null;
    return value;
  }

  function fmt(value, digits) {
    var n = num(value);
    return n === null ? "–" : n.toFixed(digits);
  }

  /* Outcome labels map to a fixed set of class names (data never picks a class). */
  var OUTCOME_CLASS = {
    "hit": "o-hit", "miss": "o-miss", "unparseable": "o-unparseable", "error": "o-error",
    "missing": "o-missing", "skipped": "o-skipped", "ok": "o-ok", "model_error": "o-error",
    "pair right": "o-pair-right", "pair wrong": "o-pair-wrong"
  };

  function badge(text) {
    var cls = Object.prototype.hasOwnProperty.call(OUTCOME_CLASS, text) ? OUTCOME_CLASS[text] : "";
    return el("span", "badge " + cls, text);
  }

  function field(parent, label, text) {
    if (text === undefined || text === null || text === "") return;
    var p = el("p", "field");
    p.appendChild(el("span", "label", label));
    p.appendChild(el("span", "value", text));
    parent.appendChild(p);
  }

  function raw(parent, label, text) {
    if (typeof text !== "string" || !text) return;
    var details = el("details");
    details.appendChild(el("summary", null, label));
    details.appendChild(el("pre", null, text));
    parent.appendChild(details);
  }

  function heading(card, id, run, outcome) {
    var h = el("h4");
    h.appendChild(el("span", "id", id));
    h.appendChild(el("span", "run", run));
    h.appendChild(badge(outcome));
    card.appendChild(h);
  }

  function drawBoxes(frame, boxes, w, h, cls) {
    if (!(w > 0 && h > 0) || !Array.isArray(boxes)) return;
    boxes.forEach(function (b) {
      if (!Array.isArray(b) || b.length !== 4) return;
      var x1 = num(b[0]), y1 = num(b[1]), x2 = num(b[2]), y2 = num(b[3]);
      if (x1 === null || y1 === null || x2 === null || y2 === null) return;
      var box = el("div", "box " + cls);
      box.style.left = (100 * x1 / w) + "%";
      box.style.top = (100 * y1 / h) + "%";
      box.style.width = (100 * (x2 - x1) / w) + "%";
      box.style.height = (100 * (y2 - y1) / h) + "%";
      frame.appendChild(box);
    });
  }

  function verdict(value) {
    if (value === true) return "hallucinated";
    if (value === false) return "clean";
    return "none";
  }

  function renderGavel(item, data) {
    var sample = data.samples[item.s] || {};
    var card = el("article", "card");
    heading(card, sample.id, data.runs[item.r], item.o);
    var frame = el("div", "frame");
    var w = num(sample.w), h = num(sample.h);
    frame.style.aspectRatio = (w > 0 && h > 0) ? (w + " / " + h) : "4 / 3";
    if (typeof sample.img === "string") {
      var img = el("img");
      img.loading = "lazy";
      img.decoding = "async";
      img.alt = "image of sample " + sample.id;
      img.src = sample.img;
      frame.appendChild(img);
    } else {
      frame.appendChild(el("div", "placeholder", sample.bad ? "image unreadable" : "no image"));
    }
    drawBoxes(frame, sample.g, w, h, "gold");
    drawBoxes(frame, item.p, w, h, "pred");
    frame.addEventListener("click", function () { card.classList.toggle("zoom"); });
    card.appendChild(frame);
    field(card, "Caption", sample.cap);
    field(card, "Gold", verdict(item.vt) + (item.c ? " · " + item.c : "") +
      " · " + (Array.isArray(sample.g) ? sample.g.length : 0) + " box(es)");
    field(card, "Model", verdict(item.vp) + " · " + (Array.isArray(item.p) ? item.p.length : 0) +
      " box(es)" + (item.bs ? " (" + item.bs + ")" : "") + " · IoU " + fmt(item.iou, 2));
    field(card, "Gold explanation", sample.ex);
    field(card, "Model explanation", item.ax);
    field(card, "Explanation judge", item.js);
    field(card, "Detail", item.d);
    raw(card, "raw response", item.raw);
    return card;
  }

  function renderDetailVerify(item, data) {
    var card = el("article", "card");
    heading(card, item.id, data.runs[item.r], item.o);
    var t = Array.isArray(item.t) ? item.t : null;
    field(card, "Domain", item.c + (item.v ? " · answer: " + item.v : "") +
      " · gold tokens " + item.gold_n + " · flagged " + item.pred_n);
    if (t) {
      field(card, "Token P / R / F1", fmt(100 * t[0], 1) + " / " + fmt(100 * t[1], 1) + " / " +
        fmt(100 * t[2], 1));
    }
    if (Array.isArray(item.seg)) {
      var p = el("p", "caption-text");
      item.seg.forEach(function (seg) {
        var cls = data.classes[seg[1]];
        p.appendChild(cls ? el("span", "tok " + cls, seg[0]) : document.createTextNode(String(seg[0])));
      });
      card.appendChild(p);
    }
    (item.warn || []).forEach(function (w) { card.appendChild(el("p", "warn", w)); });
    if (Array.isArray(item.labels) && item.labels.length) {
      field(card, "Gold labels", item.labels.map(function (l) {
        return String(l[0]) + (l[1] && l[1].length ? " [" + l[1].join(", ") + "]" : "");
      }).join(" · "));
    }
    field(card, "Detail", item.d);
    raw(card, "gold text with tags", item.gold_text);
    raw(card, "raw answer", item.raw);
    return card;
  }

  function renderVideoHallucer(item, data) {
    var card = el("article", "card");
    heading(card, item.id, data.runs[item.r], item.o);
    field(card, "Category", item.c + (item.t ? " · " + item.t : ""));
    var shown = {};
    (item.sides || []).forEach(function (side) {
      if (!Array.isArray(side.fr) || !side.fr.length) return;
      var key = side.fr.join("|");
      if (shown[key]) return;
      shown[key] = true;
      card.appendChild(el("p", "field", side.side + " video"));
      var strip = el("div", "frames");
      side.fr.forEach(function (src) {
        var img = el("img");
        img.loading = "lazy";
        img.alt = "video frame";
        img.src = src;
        strip.appendChild(img);
      });
      card.appendChild(strip);
    });
    var table = el("table", "qa");
    var head = el("tr");
    ["side", "question", "gold", "answer", ""].forEach(function (h) { head.appendChild(el("th", null, h)); });
    table.appendChild(head);
    (item.sides || []).forEach(function (side) {
      var row = el("tr");
      row.appendChild(el("td", null, side.side));
      row.appendChild(el("td", null, side.q === null ? "(question not found)" : side.q));
      row.appendChild(el("td", null, side.gold));
      var unread = Object.keys(side.u || {}).map(function (rule) { return rule + ": " + side.u[rule]; });
      var answer = side.ans === null ? "(" + (side.oc || "none") + ")" : side.ans;
      row.appendChild(el("td", null, unread.length ? answer + " · unread by " + unread.join(", ") : answer));
      row.appendChild(el("td", side.ok ? "right" : "wrong", side.ok ? "✓" : "✗"));
      table.appendChild(row);
    });
    card.appendChild(table);
    (item.sides || []).forEach(function (side) { raw(card, "raw response (" + side.side + ")", side.raw); });
    return card;
  }

  var RENDER = {
    gavel: renderGavel,
    detailverify: renderDetailVerify,
    videohallucer: renderVideoHallucer
  };

  function setup(root) {
    var source = document.getElementById(root.getAttribute("data-source"));
    if (!source) return;
    var data = JSON.parse(source.textContent);
    var render = RENDER[data.kind];
    if (!render) return;
    var pageSize = Math.max(1, parseInt(root.getAttribute("data-page-size"), 10) || 100);
    var list = root.querySelector(".cards");
    var selects = Array.prototype.slice.call(root.querySelectorAll("select[data-filter]"));
    var count = root.querySelector(".match-count");
    var page = 0;
    var shown = [];

    function pages() { return Math.max(1, Math.ceil(shown.length / pageSize)); }

    function draw() {
      page = Math.min(Math.max(0, page), pages() - 1);
      while (list.firstChild) list.removeChild(list.firstChild);
      var fragment = document.createDocumentFragment();
      shown.slice(page * pageSize, (page + 1) * pageSize).forEach(function (i) {
        fragment.appendChild(render(data.items[i], data));
      });
      list.appendChild(fragment);
      var first = shown.length ? page * pageSize + 1 : 0;
      var last = Math.min(shown.length, (page + 1) * pageSize);
      root.querySelectorAll(".page-status").forEach(function (status) {
        status.textContent = "page " + (page + 1) + " of " + pages() + " · " + first + "–" + last +
          " of " + shown.length;
      });
      root.querySelectorAll("button.first, button.prev").forEach(function (b) { b.disabled = page === 0; });
      root.querySelectorAll("button.next, button.last").forEach(function (b) { b.disabled = page >= pages() - 1; });
      root.setAttribute("data-page", String(page));
      root.setAttribute("data-shown", String(shown.length));
    }

    function apply() {
      var wanted = selects.map(function (s) { return [s.getAttribute("data-filter"), s.value]; });
      shown = [];
      data.items.forEach(function (item, i) {
        for (var k = 0; k < wanted.length; k++) {
          if (wanted[k][1] !== "" && String(item[wanted[k][0]]) !== wanted[k][1]) return;
        }
        shown.push(i);
      });
      if (count) count.textContent = shown.length + " of " + data.items.length + " shown";
      page = 0;
      draw();
    }

    function go(to, scroll) {
      page = to;
      draw();
      if (scroll) root.scrollIntoView({ block: "start" });
    }

    selects.forEach(function (s) { s.addEventListener("change", apply); });
    root.querySelectorAll(".pager").forEach(function (pager, index) {
      var scroll = index > 0;
      pager.querySelector("button.first").addEventListener("click", function () { go(0, scroll); });
      pager.querySelector("button.prev").addEventListener("click", function () { go(page - 1, scroll); });
      pager.querySelector("button.next").addEventListener("click", function () { go(page + 1, scroll); });
      pager.querySelector("button.last").addEventListener("click", function () { go(pages() - 1, scroll); });
    });
    apply();
  }

  document.querySelectorAll(".gallery[data-source]").forEach(setup);
})();
