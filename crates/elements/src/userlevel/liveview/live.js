// rclick live view: draws the router graph from /api/router, refreshes
// numeric handlers from /api/counters every second, and reads and writes
// handlers through /api/handler/NAME. No framework, no other site.
"use strict";

(function () {
  const SVGNS = "http://www.w3.org/2000/svg";
  const PORT = 8;          // port square size
  const PORT_GAP = 16;     // distance between port centers
  const LAYER_GAP = 64;    // horizontal space between layers
  const ROW_GAP = 26;      // vertical space between boxes of a layer
  const LINE = 15;         // counter line height
  const HEAD = 24;         // title line height
  const PAD = 9;
  const MAX_COUNTERS = 4;
  const PREFERRED = ["count", "byte_count", "rate", "length", "drops",
    "highwater_length", "capacity", "calls", "packets", "bytes"];
  const NOISE = new Set(["tickets", "home_thread", "scheduled", "port",
    "clients", "requests", "pending_output", "max_pending_output"]);

  const state = {
    router: null,
    generation: null,
    counters: {},
    selected: null,
    layout: null,
    failures: 0,
    token: null,
  };

  // ------------------------------------------------------------------ API

  // The write token: the server prints the page's URL with `#token=...`
  // (a fragment is never sent to the server). Kept in this site's local
  // storage, so reloads and new tabs can write, and taken out of the
  // address bar.
  const TOKEN_KEY = "rclick-write-token";
  function takeToken() {
    const m = /(?:^#|&)token=([0-9A-Za-z_-]+)/.exec(location.hash);
    if (m) {
      try { localStorage.setItem(TOKEN_KEY, m[1]); } catch (e) { /* private mode */ }
      state.token = m[1];
      history.replaceState(null, "", location.pathname + location.search);
    } else {
      try { state.token = localStorage.getItem(TOKEN_KEY); } catch (e) { state.token = null; }
    }
  }

  function setToken(t) {
    state.token = t || null;
    try {
      if (t) localStorage.setItem(TOKEN_KEY, t); else localStorage.removeItem(TOKEN_KEY);
    } catch (e) { /* private mode */ }
  }

  async function getJSON(url) {
    const r = await fetch(url, { cache: "no-store" });
    const body = await r.json().catch(() => ({ ok: false, error: "bad JSON from server" }));
    if (!r.ok && body.ok === undefined) body.ok = false;
    body.status = r.status;
    return body;
  }

  function handlerURL(path) {
    return "/api/handler/" + path.split("/").map(encodeURIComponent).join("/");
  }

  /** Reads handler `path` (`elem.name`), optionally with a parameter. */
  async function readHandler(path, param) {
    let url = handlerURL(path);
    if (param !== undefined && param !== null && param !== "") {
      url += "?param=" + encodeURIComponent(param);
    }
    return getJSON(url);
  }

  /** Writes `value` to handler `path`; resolves to {ok, error?, status}. */
  async function writeHandler(path, value) {
    const headers = { "Content-Type": "text/plain; charset=utf-8" };
    if (state.token) headers.Authorization = "Bearer " + state.token;
    const r = await fetch(handlerURL(path), {
      method: "POST",
      headers,
      body: value === undefined ? "" : String(value),
    });
    const body = await r.json().catch(() => ({ ok: r.ok }));
    body.status = r.status;
    return body;
  }

  // -------------------------------------------------------------- helpers

  function el(tag, attrs, parent) {
    const e = document.createElementNS(SVGNS, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function h(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) {
      if (k === "class") e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    if (text !== undefined) e.textContent = text;
    return e;
  }

  const measurer = document.createElement("canvas").getContext("2d");
  function textWidth(s, font) {
    measurer.font = font;
    return measurer.measureText(s).width;
  }

  function formatNumber(v) {
    if (typeof v !== "number") return v === undefined ? "\u2013" : String(v);
    if (Number.isInteger(v)) return v.toLocaleString("en-US");
    return v.toLocaleString("en-US", { maximumFractionDigits: 3 });
  }

  function setStatus(text, cls) {
    const s = document.getElementById("status");
    s.textContent = text;
    s.className = "status " + (cls || "");
  }

  /** Numeric handlers worth showing in an element's box. */
  function counterKeys(name) {
    const c = state.counters[name] || {};
    const keys = Object.keys(c).filter((k) => !NOISE.has(k) && !(c[k] < 0));
    keys.sort((a, b) => {
      const ia = PREFERRED.indexOf(a), ib = PREFERRED.indexOf(b);
      return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || a.localeCompare(b);
    });
    const isQueue = "length" in c && "capacity" in c;
    return keys.filter((k) => !(isQueue && (k === "length" || k === "capacity")))
      .slice(0, MAX_COUNTERS);
  }

  function isQueue(name) {
    const c = state.counters[name] || {};
    return typeof c.length === "number" && typeof c.capacity === "number";
  }

  // --------------------------------------------------------------- layout

  /**
   * Layered left-to-right layout: cycles broken by DFS, layers by longest
   * path, order within layers by a few barycenter sweeps.
   */
  function computeLayout(router) {
    const els = router.elements;
    const n = els.length;
    const succ = els.map(() => []);
    const pred = els.map(() => []);
    for (const c of router.connections) {
      succ[c.from].push(c.to);
      pred[c.to].push(c.from);
    }
    const portless = els.map((e, i) =>
      e.inputs.length === 0 && e.outputs.length === 0 && succ[i].length === 0 && pred[i].length === 0);

    // Break cycles: edges to a node on the DFS stack are back edges.
    const color = new Array(n).fill(0);
    const back = new Set();
    const order = [];
    for (let i = 0; i < n; i++) if (pred[i].length === 0) order.push(i);
    for (let i = 0; i < n; i++) if (pred[i].length !== 0) order.push(i);
    for (const root of order) {
      if (color[root] !== 0 || portless[root]) continue;
      const stack = [[root, 0]];
      color[root] = 1;
      while (stack.length) {
        const top = stack[stack.length - 1];
        const [v, k] = top;
        if (k < succ[v].length) {
          top[1]++;
          const w = succ[v][k];
          if (color[w] === 1) back.add(v + ">" + w);
          else if (color[w] === 0) { color[w] = 1; stack.push([w, 0]); }
        } else {
          color[v] = 2;
          stack.pop();
        }
      }
    }
    const fwd = (a, b) => !back.has(a + ">" + b);

    // Longest-path layering over forward edges (Kahn's order).
    const layer = new Array(n).fill(0);
    const indeg = new Array(n).fill(0);
    for (let v = 0; v < n; v++) for (const w of succ[v]) if (fwd(v, w)) indeg[w]++;
    const queue = [];
    for (let v = 0; v < n; v++) if (indeg[v] === 0) queue.push(v);
    while (queue.length) {
      const v = queue.shift();
      for (const w of succ[v]) {
        if (!fwd(v, w)) continue;
        layer[w] = Math.max(layer[w], layer[v] + 1);
        if (--indeg[w] === 0) queue.push(w);
      }
    }
    const nlayers = Math.max(0, ...layer.filter((_, i) => !portless[i])) + 1;
    const layers = Array.from({ length: nlayers }, () => []);
    for (let v = 0; v < n; v++) if (!portless[v]) layers[layer[v]].push(v);

    // Barycenter sweeps to reduce crossings.
    const pos = new Array(n).fill(0);
    const setPos = () => layers.forEach((L) => L.forEach((v, i) => { pos[v] = i; }));
    setPos();
    const bary = (v, nbrs) => {
      const ns = nbrs[v].filter((w) => !portless[w]);
      if (!ns.length) return pos[v];
      return ns.reduce((s, w) => s + pos[w], 0) / ns.length;
    };
    for (let sweep = 0; sweep < 6; sweep++) {
      const down = sweep % 2 === 0;
      const seq = down ? layers.slice(1) : layers.slice(0, -1).reverse();
      for (const L of seq) {
        const b = new Map(L.map((v) => [v, bary(v, down ? pred : succ)]));
        L.sort((a, c) => b.get(a) - b.get(c) || a - c);
        L.forEach((v, i) => { pos[v] = i; });
      }
    }

    // Box sizes.
    const titleFont = "600 12.5px system-ui, sans-serif";
    const boxes = els.map((e, i) => {
      const keys = counterKeys(e.name);
      const title = e.name + " :: " + e.class;
      let w = textWidth(title, titleFont) + 2 * PAD + 6;
      const labels = Math.max(0, ...keys.map((k) => textWidth(k, "11px system-ui, sans-serif")));
      w = Math.max(w, labels + 2 * PAD + 84, 130);
      const nports = Math.max(e.inputs.length, e.outputs.length);
      let hgt = HEAD + keys.length * LINE + (isQueue(e.name) ? 24 : 0) + PAD;
      hgt = Math.max(hgt, nports * PORT_GAP + 10, portless[i] ? 30 : 36);
      return { i, w, h: hgt, keys, x: 0, y: 0, layer: layer[i] };
    });

    // Positions: layers left to right, each centered vertically.
    const layerW = layers.map((L) => Math.max(0, ...L.map((v) => boxes[v].w)));
    const layerH = layers.map((L) => L.reduce((s, v) => s + boxes[v].h, 0) + ROW_GAP * Math.max(0, L.length - 1));
    const totalH = Math.max(0, ...layerH);
    let x = 20;
    layers.forEach((L, li) => {
      let y = 20 + (totalH - layerH[li]) / 2;
      for (const v of L) {
        boxes[v].x = x + (layerW[li] - boxes[v].w) / 2;
        boxes[v].y = y;
        y += boxes[v].h + ROW_GAP;
      }
      x += layerW[li] + LAYER_GAP;
    });
    let width = Math.max(x - LAYER_GAP + 20, 300);
    let height = totalH + 40;

    // Elements without ports or connections: a row underneath.
    const loose = boxes.filter((b) => portless[b.i]);
    if (loose.length) {
      let lx = 20;
      const ly = height + 10;
      for (const b of loose) {
        if (lx + b.w > Math.max(width, 900) && lx > 20) { lx = 20; height += 50; }
        b.x = lx;
        b.y = height + 10;
        lx += b.w + 16;
        width = Math.max(width, lx + 4);
      }
      height = ly + 50;
    }
    return { boxes, back, portless, width, height };
  }

  function portY(box, idx, count) {
    const span = (count - 1) * PORT_GAP;
    return box.y + box.h / 2 - span / 2 + idx * PORT_GAP;
  }

  // ---------------------------------------------------------------- draw

  function draw() {
    const router = state.router;
    const svg = document.getElementById("graph");
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const L = computeLayout(router);
    state.layout = L;
    svg.setAttribute("width", L.width);
    svg.setAttribute("height", L.height);
    svg.setAttribute("viewBox", "0 0 " + L.width + " " + L.height);

    const defs = el("defs", {}, svg);
    const marker = el("marker", {
      id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5,
      markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse",
    }, defs);
    el("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#5b6977" }, marker);

    const edges = el("g", { class: "edges" }, svg);
    for (const c of router.connections) {
      const a = L.boxes[c.from], b = L.boxes[c.to];
      const fe = router.elements[c.from], te = router.elements[c.to];
      const x1 = a.x + a.w + PORT / 2, y1 = portY(a, c.from_port, fe.outputs.length);
      const x2 = b.x - PORT / 2 - 1, y2 = portY(b, c.to_port, te.inputs.length);
      const isBack = L.back.has(c.from + ">" + c.to) || x2 <= x1;
      let d;
      if (isBack) {
        const below = Math.max(a.y + a.h, b.y + b.h) + 22;
        d = `M ${x1} ${y1} C ${x1 + 60} ${y1}, ${x1 + 60} ${below}, ${(x1 + x2) / 2} ${below} ` +
            `S ${x2 - 60} ${y2}, ${x2} ${y2}`;
      } else {
        const dx = Math.max(30, (x2 - x1) / 2);
        d = `M ${x1} ${y1} C ${x1 + dx} ${y1}, ${x2 - dx} ${y2}, ${x2} ${y2}`;
      }
      el("path", {
        d, class: "edge" + (isBack ? " back" : ""), "marker-end": "url(#arrow)",
        "data-from": fe.name, "data-to": te.name,
      }, edges);
    }

    const nodes = el("g", { class: "nodes" }, svg);
    router.elements.forEach((e, i) => {
      const b = L.boxes[i];
      const g = el("g", {
        class: "element" + (L.portless[i] ? " portless" : "") + (state.selected === e.name ? " selected" : ""),
        "data-name": e.name, "data-class": e.class, tabindex: 0,
      }, nodes);
      el("title", {}, g).textContent = e.name + " :: " + e.class + (e.config ? "(" + e.config + ")" : "");
      el("rect", { class: "box", x: b.x, y: b.y, width: b.w, height: b.h }, g);
      const t = el("text", { class: "title", x: b.x + PAD, y: b.y + 16 }, g);
      t.appendChild(document.createTextNode(e.name + " :: "));
      const cls = el("tspan", { class: "cls" }, t);
      cls.textContent = e.class;

      let y = b.y + HEAD;
      if (isQueue(e.name)) {
        const bw = b.w - 2 * PAD;
        el("rect", { class: "qbar-bg", x: b.x + PAD, y: y - 4, width: bw, height: 16, rx: 2 }, g);
        el("rect", { class: "qbar", x: b.x + PAD, y: y - 4, width: 0, height: 16, rx: 2, "data-element": e.name }, g);
        el("text", { class: "qtext", x: b.x + PAD + 5, y: y + 8, "data-element": e.name }, g);
        y += 24;
      }
      for (const k of b.keys) {
        el("text", { class: "clabel", x: b.x + PAD, y: y + 8 }, g).textContent = k;
        el("text", {
          class: "counter", x: b.x + b.w - PAD, y: y + 8,
          "data-element": e.name, "data-handler": k,
        }, g);
        y += LINE;
      }

      e.inputs.forEach((p, k) => {
        el("rect", {
          class: "port input " + p.mode + (p.agnostic ? " agnostic" : ""),
          x: b.x - PORT / 2, y: portY(b, k, e.inputs.length) - PORT / 2, width: PORT, height: PORT,
          fill: p.mode === "pull" ? "#fff" : "#000",
          "data-port": k, "data-mode": p.mode,
        }, g);
      });
      e.outputs.forEach((p, k) => {
        el("rect", {
          class: "port output " + p.mode + (p.agnostic ? " agnostic" : ""),
          x: b.x + b.w - PORT / 2, y: portY(b, k, e.outputs.length) - PORT / 2, width: PORT, height: PORT,
          fill: p.mode === "pull" ? "#fff" : "#000",
          "data-port": k, "data-mode": p.mode,
        }, g);
      });
      g.addEventListener("click", () => select(e.name));
      g.addEventListener("keydown", (ev) => { if (ev.key === "Enter") select(e.name); });
    });
    updateCounters();
    document.getElementById("summary").textContent =
      router.elements.length + " elements, " + router.connections.length + " connections";
  }

  function updateCounters() {
    const svg = document.getElementById("graph");
    for (const t of svg.querySelectorAll("text.counter")) {
      const c = state.counters[t.dataset.element] || {};
      const v = formatNumber(c[t.dataset.handler]);
      if (t.textContent !== v) {
        t.classList.toggle("changed", t.textContent !== "");
        t.textContent = v;
      } else {
        t.classList.remove("changed");
      }
    }
    for (const r of svg.querySelectorAll("rect.qbar")) {
      const c = state.counters[r.dataset.element] || {};
      const bg = r.previousSibling;
      const frac = c.capacity > 0 ? Math.min(1, c.length / c.capacity) : 0;
      r.setAttribute("width", (Number(bg.getAttribute("width")) * frac).toFixed(1));
      r.setAttribute("class", "qbar" + (frac >= 1 ? " full" : frac >= 0.75 ? " high" : ""));
    }
    for (const t of svg.querySelectorAll("text.qtext")) {
      const c = state.counters[t.dataset.element] || {};
      t.textContent = formatNumber(c.length) + " / " + formatNumber(c.capacity);
    }
  }

  // --------------------------------------------------------------- panel

  function handlerRow(path, spec) {
    const row = h("div", { class: "handler", "data-handler": path });
    const top = h("div", { class: "top" });
    top.appendChild(h("span", { class: "hname" }, spec.name));
    top.appendChild(h("span", { class: "flags" }, spec.flags));
    top.appendChild(h("span", { class: "spacer" }));
    row.appendChild(top);
    const out = h("pre", { class: "value" });
    out.hidden = true;
    const msg = h("div", { class: "result" });

    if (spec.read) {
      const f = h("form", { class: "read", "data-handler": path });
      let param = null;
      if (spec.param) {
        param = h("input", { type: "text", name: "param", placeholder: "parameter" });
        f.appendChild(param);
      }
      f.appendChild(h("button", { type: "submit" }, "Read"));
      if (!param) f.classList.add("inline");
      f.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        const r = await readHandler(path, param ? param.value : null).catch((e) => ({ ok: false, error: String(e) }));
        out.hidden = false;
        out.textContent = r.ok ? r.value : "";
        const w = row.querySelector("form.write input[type=text]");
        if (r.ok && w && !param && !w.value) w.value = r.value.replace(/\n$/, "");
        msg.className = "result " + (r.ok ? "" : "err");
        msg.textContent = r.ok ? "" : r.error;
      });
      (param ? row : top).appendChild(f);
    }
    if (spec.write) {
      const f = h("form", { class: "write", "data-handler": path });
      let input = null;
      if (spec.checkbox) {
        input = h("input", { type: "checkbox", name: "value" });
        f.appendChild(input);
        f.appendChild(h("button", { type: "submit" }, "Set"));
      } else if (spec.button) {
        f.appendChild(h("button", { type: "submit" }, spec.name));
        f.classList.add("inline");
      } else {
        input = h("input", { type: "text", name: "value", placeholder: "new value" });
        f.appendChild(input);
        f.appendChild(h("button", { type: "submit" }, "Write"));
      }
      f.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        const value = !input ? "" : input.type === "checkbox" ? String(input.checked) : input.value;
        const r = await writeHandler(path, value).catch((e) => ({ ok: false, error: String(e) }));
        msg.className = "result " + (r.ok ? "ok" : "err");
        msg.textContent = r.ok ? "written" : (r.error || "failed") + " (HTTP " + r.status + ")";
        row.dataset.lastWrite = r.ok ? "ok" : "error";
        if (r.ok) refreshCounters();
      });
      (input ? row : top).appendChild(f);
    }
    row.appendChild(out);
    row.appendChild(msg);
    return row;
  }

  function renderPanel() {
    const panel = document.getElementById("panel");
    panel.textContent = "";
    const router = state.router;
    const e = router && router.elements.find((x) => x.name === state.selected);
    if (!e) {
      panel.appendChild(h("p", { class: "hint" }, "Click an element to see its handlers."));
      if (router) {
        panel.appendChild(h("h3", {}, "Router handlers"));
        for (const spec of router.global_handlers) {
          if (spec.read || spec.write) panel.appendChild(handlerRow(spec.name, spec));
        }
      }
      return;
    }
    const title = h("h2");
    title.appendChild(document.createTextNode(e.name + " :: "));
    title.appendChild(h("span", { class: "cls" }, e.class));
    panel.appendChild(title);
    if (e.config) {
      panel.appendChild(h("h3", {}, "Configuration"));
      panel.appendChild(h("pre", {}, e.config));
    }
    const desc = (ps) => ps.map((p, i) => i + ": " + p.mode + (p.agnostic ? " (agnostic)" : "")).join("\n");
    if (e.inputs.length || e.outputs.length) {
      panel.appendChild(h("h3", {}, "Ports"));
      const ports = h("div", { class: "ports-list" });
      if (e.inputs.length) ports.appendChild(h("pre", {}, "inputs\n" + desc(e.inputs)));
      if (e.outputs.length) ports.appendChild(h("pre", {}, "outputs\n" + desc(e.outputs)));
      panel.appendChild(ports);
    }
    panel.appendChild(h("h3", {}, "Handlers"));
    for (const spec of e.handlers) panel.appendChild(handlerRow(e.name + "." + spec.name, spec));
  }

  function select(name) {
    state.selected = name;
    for (const g of document.querySelectorAll("#graph g.element")) {
      g.classList.toggle("selected", g.dataset.name === name);
    }
    renderPanel();
  }

  // ------------------------------------------------------------- refresh

  async function loadRouter() {
    const r = await getJSON("/api/router");
    if (!r.elements) throw new Error(r.error || "no router");
    state.router = r;
    state.generation = r.generation;
    if (state.selected && !r.elements.some((e) => e.name === state.selected)) state.selected = null;
  }

  async function refreshCounters() {
    const c = await getJSON("/api/counters");
    if (!c.elements) throw new Error(c.error || "no counters");
    state.counters = c.elements;
    return c.generation;
  }

  let ticking = false;
  async function tick() {
    if (ticking) return;
    ticking = true;
    try {
      const gen = await refreshCounters();
      if (gen !== state.generation) {
        await loadRouter();
        await refreshCounters();
        draw();
        renderPanel();
      } else {
        updateCounters();
      }
      state.failures = 0;
      setStatus("live", "live");
      document.body.dataset.ready = "true";
    } catch (err) {
      state.failures++;
      setStatus("disconnected", "down");
    } finally {
      ticking = false;
    }
  }

  async function start() {
    await tick();
    setInterval(tick, 1000);
  }

  window.rclick = { state, readHandler, writeHandler, select, refresh: tick, setToken };
  takeToken();
  start();
})();
