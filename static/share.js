/* agentview's shared file: a session's tree, perspectives, dialogs, messages and search, read from the data
   this file carries (gzip + base64: the head in #agentview-data, the events in parts, .agentview-part). The
   first view inflates the head and only the parts its first screen shows; the rest follow, and the views that
   need every event (a dialog, a message's causality, search) wait for them. Every view is a #fragment:
   #agent=ID, #dialog=ID,ID, #search=WORDS, #problems, or a message id. Nothing here asks the network. */
(function () {
  "use strict";

  const KIND_LABEL = {H: "Heard", D: "Did", R: "Result", S: "Said", Y: "System", N: "Noted"};
  const CHUNK = 100; // entries rendered at a time, more as the reader scrolls
  const FIRST = 30; // entries of the first screen: more than a screen holds, few parts to inflate
  const SEARCH_SHOWN = 200;
  const md = window.markdownit("commonmark", {html: false, linkify: false, typographer: false})
    .enable(["table", "strikethrough"]).disable(["image"]);
  md.core.ruler.push("demote_headings", (state) => { // a page has one h1: logged headings start at h4, as on the pages
    for (const t of state.tokens) {
      if (t.type === "heading_open" || t.type === "heading_close") t.tag = "h" + Math.min(6, Number(t.tag[1]) + 3);
    }
  });
  const linkOpen = md.renderer.rules.link_open || ((tokens, i, options, env, self) => self.renderToken(tokens, i, options));
  md.renderer.rules.link_open = (tokens, i, options, env, self) => {
    tokens[i].attrSet("rel", "noopener noreferrer nofollow");
    return linkOpen(tokens, i, options, env, self);
  };

  let D = null; // the head (session, agents, problems, paired), and D.events filled a part at a time
  let parts = []; // {first, count, node, loaded: a promise once asked for}
  let everything = null; // a promise of every part, and of byId
  let byId = new Map(); // message id -> position (made once every part is in)
  let resultsOf = new Map(); // call position -> result positions
  let callOf = new Map(); // result position -> the call position it answers
  let haystack = null; // lower-cased searchable text per position, made on the first search
  let observer = null;
  let generation = 0; // the view being shown: a view that waited for parts draws only if it is still the one

  const view = document.getElementById("view");
  const esc = (text) => String(text).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
  const agentOf = (ordinal) => D.agents[ordinal];
  const agentById = (id) => D.agents.find((a) => a.id === id);
  const frag = (key, value) => "#" + key + "=" + encodeURIComponent(value);
  const msgHref = (id) => "#" + encodeURIComponent(id);

  function inflate(node) {
    const text = node.textContent.trim();
    let bytes;
    if (Uint8Array.fromBase64) bytes = Uint8Array.fromBase64(text);
    else {
      const binary = atob(text);
      bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    }
    return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).json();
  }

  async function load() {
    const head = await inflate(document.getElementById("agentview-data"));
    parts = [...document.querySelectorAll("script.agentview-part")].map((node) =>
      ({first: Number(node.dataset.first), count: Number(node.dataset.count), node, loaded: null}));
    const last = parts[parts.length - 1];
    head.events = new Array(last ? last.first + last.count : 0);
    for (let n = 0; n < head.paired.length; n += 2) {
      const [result, call] = [head.paired[n], head.paired[n + 1]];
      callOf.set(result, call);
      if (!resultsOf.has(call)) resultsOf.set(call, []);
      resultsOf.get(call).push(result);
    }
    return head;
  }

  function part(n) {
    const it = parts[n];
    if (!it.loaded) {
      it.loaded = inflate(it.node).then((rows) => {
        for (let i = 0; i < rows.length; i++) D.events[it.first + i] = rows[i];
        it.node.remove(); // its text is no longer needed
      });
    }
    return it.loaded;
  }

  function partAt(p) {
    let low = 0, high = parts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (parts[middle].first <= p) low = middle; else high = middle - 1;
    }
    return low;
  }

  // The parts holding these entries and the results of their calls
  function need(positions) {
    const wanted = new Set();
    for (const p of positions) {
      wanted.add(partAt(p));
      for (const r of resultsOf.get(p) || []) wanted.add(partAt(r));
    }
    return Promise.all([...wanted].map(part));
  }

  // `missing`: where entries are missing (from here on, in a list; from searches and dialogs, above the views)
  function damaged(error, missing) {
    console.error(`agentview: part of the shared file could not be read: ${error.message}`);
    return `<p class="error damaged" role="alert">Part of this file could not be read: entries are missing ${missing}. The file may be damaged; ask for it again.</p>`;
  }

  // Every part, one after another (the page stays responsive between them), then the map of message ids
  function allEvents() {
    if (!everything) {
      everything = (async () => {
        for (let n = 0; n < parts.length; n++) await part(n);
        D.events.forEach((e, p) => { if (!byId.has(e.i)) byId.set(e.i, p); });
      })();
    }
    return everything;
  }

  // --- pieces ---------------------------------------------------------------------------------------

  function when(ts) {
    if (ts === undefined) return "";
    const date = typeof ts === "number" ? new Date(ts > 1e12 ? ts : ts * 1000) : new Date(ts);
    if (isNaN(date)) return `<time>${esc(ts)}</time>`;
    const shown = date.toLocaleString(undefined, {month: "short", day: "numeric", hour: "2-digit", minute: "2-digit"});
    return `<time datetime="${esc(date.toISOString())}" title="${esc(date.toString())}">${esc(shown)}</time>`;
  }

  function agentLink(ordinal) {
    const a = agentOf(ordinal);
    return a ? `<a class="agent-link c${a.ordinal % 8}" href="${frag("agent", a.id)}">${esc(a.name)}</a>` : "?";
  }

  function prose(e) {
    if (!e.c) return "";
    if (e.md) return `<div class="prose">${md.render(e.c)}</div>`;
    return `<div class="plain">${esc(e.c)}</div>`;
  }

  function output(text, label) {
    const lines = text.split("\n").length;
    const body = `<pre class="output">${esc(text)}</pre>`;
    if (lines <= 12 && text.length <= 1500) return body;
    return `<details class="fold"><summary>${esc(label)} · ${lines} lines</summary>${body}</details>`;
  }

  function usageLine(u, model) {
    if (!u && !model) return "";
    const parts = [];
    if (model) parts.push(esc(model));
    if (u) {
      if (u.input_tokens !== undefined) parts.push(`in ${u.input_tokens.toLocaleString()}`);
      if (u.output_tokens !== undefined) parts.push(`out ${u.output_tokens.toLocaleString()}`);
      if (u.cache_read_input_tokens) parts.push(`cache ${u.cache_read_input_tokens.toLocaleString()}`);
    }
    return `<p class="quiet usage">${parts.join(" · ")}</p>`;
  }

  function callBlock(p, e, call) {
    const results = (resultsOf.get(p) || []).filter((r) => !call.id || !D.events[r].tc || D.events[r].tc === call.id);
    const spawned = (call.sp || []).map((o) => `<p class="spawned">started ${agentLink(o)}</p>`).join("");
    const shownResults = results.map((r) => {
      const result = D.events[r];
      return `<div class="result" id="m-${esc(result.i)}"><p class="quiet">result <a href="${msgHref(result.i)}">${esc(result.i)}</a></p>${output(result.c || "", "output")}</div>`;
    }).join("");
    const status = results.length ? "" : ' <span class="badge">no result</span>';
    return `<details class="call"${results.length ? "" : " open"}><summary><span class="tool">${esc(call.n)}</span> <span class="call-summary">${esc(call.s)}</span>${status}</summary>` +
      `${output(call.x || "", "arguments")}${spawned}${shownResults}</details>`;
  }

  function entry(p) {
    const e = D.events[p];
    const parts = [];
    if (e.sb !== undefined) {
      const from = e.sa !== undefined ? agentLink(e.sa) : "an unlogged message";
      parts.push(`<p class="delivery">delivered from ${from}: <a href="${msgHref(e.sb)}">${esc(e.sb)}</a>` +
        (e.mo ? ' <span class="badge warn">modified on its way</span>' : "") + "</p>");
    }
    if (e.th) parts.push(`<details class="fold thinking"><summary>thinking</summary><div class="plain">${esc(e.th)}</div></details>`);
    parts.push(e.k === "R" ? output(e.c || "", "output") : prose(e));
    for (const call of e.calls || []) parts.push(callBlock(p, e, call));
    if (e.ca) parts.push(`<p class="quiet">because of ${e.ca.map((c) => `<a href="${msgHref(c)}">${esc(c)}</a>`).join(", ")}</p>`);
    parts.push(usageLine(e.u, e.m));
    const kind = KIND_LABEL[e.k] || e.t || "Event";
    return `<article class="entry k-${e.k}" id="m-${esc(e.i)}" data-position="${p}">` +
      `<header><span class="kind">${esc(kind)}</span> ${agentLink(e.a)} ${when(e.ts)}` +
      `<a class="permalink" href="${msgHref(e.i)}" title="Link to this message" aria-label="Link to ${esc(e.i)}">#</a></header>` +
      parts.join("") + "</article>";
  }

  // Entries appear a chunk at a time as the reader scrolls: a transcript of any length opens at once.
  // `needs(positions)`: a promise of what a chunk's entries need (parts not inflated yet), if anything.
  async function lazyList(container, positions, render, until, needs) {
    const mine = generation;
    let shown = 0, busy = false;
    const sentinel = document.createElement("div");
    sentinel.className = "sentinel";
    const near = () => sentinel.isConnected && sentinel.getBoundingClientRect().top < innerHeight + 800;
    const more = async (upTo) => {
      if (busy) return;
      busy = true;
      const end = Math.min(positions.length, Math.max(shown + (shown ? CHUNK : FIRST), upTo || 0));
      if (needs) {
        try {
          await needs(positions.slice(shown, end));
        } catch (error) { // a damaged part: say so where the list stops, keep what it drew
          if (mine !== generation) return;
          if (observer) observer.disconnect();
          sentinel.outerHTML = damaged(error, "from here on");
          return;
        }
      }
      if (mine !== generation) return; // another view was opened meanwhile
      const html = [];
      for (; shown < end; shown++) html.push(render(positions[shown]));
      sentinel.insertAdjacentHTML("beforebegin", html.join(""));
      busy = false;
      if (shown >= positions.length) { sentinel.remove(); if (observer) observer.disconnect(); }
      else if (near()) more();
      // Observed afresh (its first report is the sentinel's state now): scrolled out by this chunk and back in
      // before the observer looked again, it reported no change and the list stopped.
      else if (observer) { observer.unobserve(sentinel); observer.observe(sentinel); }
    };
    container.appendChild(sentinel);
    await more(until === undefined ? 0 : until + 1);
    if (shown < positions.length && mine === generation) {
      observer = new IntersectionObserver((seen) => { if (seen.some((s) => s.isIntersecting)) more(); }, {rootMargin: "800px"});
      observer.observe(sentinel);
    }
  }

  // --- views ------------------------------------------------------------------------------------------

  function tree() {
    const children = new Map();
    for (const a of D.agents) {
      const key = a.parent === null || a.parent === undefined ? -1 : a.parent;
      if (!children.has(key)) children.set(key, []);
      children.get(key).push(a);
    }
    const node = (a) => {
      const kids = children.get(a.ordinal) || [];
      const row = `<a class="agent-link c${a.ordinal % 8}" href="${frag("agent", a.id)}" data-agent="${esc(a.id)}">${esc(a.name)}</a>` +
        `<span class="meta">${a.model ? esc(a.model) + " · " : ""}${a.entries.length} entries${a.subtree_cost ? " · " + esc(a.subtree_cost) : ""}</span>`;
      if (!kids.length) return `<li><div class="row">${row}</div></li>`;
      return `<li><details open><summary><span class="row">${row}</span></summary><ul>${kids.map(node).join("")}</ul></details></li>`;
    };
    document.getElementById("tree").innerHTML = `<ul class="tree">${(children.get(-1) || []).map(node).join("")}</ul>`;
  }

  function heading(title, sub) {
    return `<h1>${esc(title)}</h1>${sub ? `<p class="quiet">${sub}</p>` : ""}`;
  }

  function overview() {
    const s = D.session;
    const roots = D.agents.filter((a) => a.parent === null || a.parent === undefined);
    view.innerHTML = heading(s.title || s.name, `${esc(s.format)} · ${s.events.toLocaleString()} events · ${D.agents.length} agents` +
      (s.cost ? ` · ${esc(s.cost)}` : "") + ` · shared ${esc(s.shared_at)}`) +
      `<nav class="actions"><a class="button" href="${frag("dialog", D.agents.map((a) => a.id).join(","))}">Dialog of every agent</a>` +
      (D.problems.length ? ` <a class="button" href="#problems">${D.problems.length} problems</a>` : "") + "</nav>" +
      `<h2>Agents</h2><ul class="cards">${D.agents.map((a) => `<li>${agentLink(a.ordinal)} <span class="quiet">${a.model ? esc(a.model) + " · " : ""}${a.entries.length} entries${a.cost ? " · " + esc(a.cost) : ""}</span></li>`).join("")}</ul>` +
      (roots.length ? "" : "<p>No agents.</p>");
  }

  async function perspective(agent, target) {
    const positions = agent.entries.filter((p) => !callOf.has(p));
    const creator = agent.created_by ? ` · created by <a href="${msgHref(agent.created_by)}">${esc(agent.created_by)}</a>` : "";
    const parent = agent.parent !== null && agent.parent !== undefined ? ` · under ${agentLink(agent.parent)}` : "";
    view.innerHTML = heading(agent.name + "’s perspective", `${agent.model ? esc(agent.model) + " · " : ""}${agent.entries.length} entries` +
      (agent.cost ? " · " + esc(agent.cost) : "") + parent + creator) + '<div id="entries" class="entries"></div>';
    const list = document.getElementById("entries");
    let until;
    if (target !== undefined) {
      const shownAt = callOf.has(target) ? callOf.get(target) : target;
      until = positions.indexOf(shownAt);
      if (until < 0) until = undefined;
    }
    markTree(agent.id);
    if (!positions.length) list.innerHTML = '<p class="empty">This agent has no entries.</p>';
    else await lazyList(list, positions, entry, until, need);
  }

  function causalityPanel(p) {
    const e = D.events[p];
    const chain = [];
    let at = e;
    for (let step = 0; step < 20 && at && at.ca && at.ca.length; step++) {
      const next = byId.get(at.ca[0]);
      if (next === undefined) { chain.push(`<a href="${msgHref(at.ca[0])}">${esc(at.ca[0])}</a> (not logged)`); break; }
      at = D.events[next];
      chain.push(`<a href="${msgHref(at.i)}">${esc(at.i)}</a> (${agentLink(at.a)})`);
    }
    const deliveries = [], referrers = [];
    D.events.forEach((other, q) => {
      if (other.sb === e.i) deliveries.push(q);
      else if (other.ca && other.ca.includes(e.i)) referrers.push(q);
    });
    const list = (qs) => qs.slice(0, 50).map((q) => `<a href="${msgHref(D.events[q].i)}">${esc(D.events[q].i)}</a> (${agentLink(D.events[q].a)})`).join(", ");
    return `<section class="causality" aria-label="How this message came to be"><h2>Message ${esc(e.i)}</h2>` +
      (e.sb ? `<p>Represents <a href="${msgHref(e.sb)}">${esc(e.sb)}</a>${e.mo ? ' <span class="badge warn">modified on its way</span>' : ""}</p>` : "") +
      `<p>Came from: ${chain.length ? chain.join(" ← ") : "nothing it names"}</p>` +
      (deliveries.length ? `<p>Delivered as: ${list(deliveries)}</p>` : "") +
      (referrers.length ? `<p>Led to: ${list(referrers)}</p>` : "") + "</section>";
  }

  async function message(id) {
    const mine = generation;
    await allEvents();
    if (mine !== generation) return;
    const p = byId.get(id);
    if (p === undefined) { view.innerHTML = heading("Not in this session", esc(id)); return; }
    const agent = agentOf(D.events[p].a);
    await perspective(agent, p);
    if (mine !== generation) return;
    view.querySelector("h1").insertAdjacentHTML("afterend", causalityPanel(p));
    const target = document.getElementById("m-" + id);
    if (target) {
      target.classList.add("target");
      target.closest("details.call")?.setAttribute("open", "");
      target.scrollIntoView({block: "start"});
    }
  }

  async function dialog(ids) {
    const mine = generation;
    await allEvents();
    if (mine !== generation) return;
    const chosen = ids.map(agentById).filter(Boolean);
    const selected = new Set(chosen.map((a) => a.ordinal));
    const items = new Map(); // the dialog's rule: each distinct message (its substance) once
    for (const a of chosen) {
      for (const p of a.dialog) {
        const e = D.events[p];
        const key = e.sb || e.i;
        if (!items.has(key)) {
          const original = byId.get(key);
          items.set(key, {key, original, members: []});
        }
        items.get(key).members.push(p);
      }
    }
    const ordered = [...items.values()].map((item) => {
      item.members.sort((x, y) => x - y);
      item.at = item.original !== undefined ? item.original : item.members[0];
      return item;
    }).sort((x, y) => x.at - y.at);
    const picker = D.agents.map((a) => `<label class="pick"><input type="checkbox" value="${esc(a.id)}"${selected.has(a.ordinal) ? " checked" : ""}> ${esc(a.name)}</label>`).join("");
    view.innerHTML = heading("Dialog", `${chosen.map((a) => esc(a.name)).join(", ") || "no agents chosen"} · ${ordered.length} messages, each once`) +
      `<form class="picker" id="picker"><fieldset><legend>Agents in the dialog</legend>${picker}</fieldset><button class="button" type="submit">Show dialog</button></form>` +
      '<div id="entries" class="entries"></div>';
    document.getElementById("picker").addEventListener("submit", (event) => {
      event.preventDefault();
      const picked = [...event.target.querySelectorAll("input:checked")].map((i) => i.value);
      location.hash = frag("dialog", picked.join(","));
    });
    const list = document.getElementById("entries");
    if (!ordered.length) { list.innerHTML = '<p class="empty">These agents exchanged no messages.</p>'; return; }
    lazyList(list, ordered.map((_, n) => n), (n) => {
      const item = ordered[n];
      const shown = D.events[item.at];
      const recipients = [...new Set(item.members.filter((p) => D.events[p].sb !== undefined).map((p) => D.events[p].a))];
      const modified = item.members.some((p) => D.events[p].mo);
      return `<article class="entry dialog-item" id="m-${esc(shown.i)}"><header>${agentLink(shown.a)}` +
        (recipients.length ? ` → ${recipients.map(agentLink).join(", ")}` : "") + ` ${when(shown.ts)}` +
        (modified ? ' <span class="badge warn">modified on its way</span>' : "") +
        `<a class="permalink" href="${msgHref(shown.i)}" aria-label="Link to ${esc(shown.i)}">#</a></header>${prose(shown)}</article>`;
    });
  }

  function searchText(e) {
    let text = e.c || "";
    for (const call of e.calls || []) text += "\n" + call.s;
    return text;
  }

  async function search(query) {
    document.getElementById("search-input").value = query;
    const mine = generation;
    await allEvents();
    if (mine !== generation) return;
    const needle = query.trim().toLowerCase();
    if (!haystack) haystack = D.events.map((e) => searchText(e).toLowerCase());
    const hits = [];
    if (needle) haystack.forEach((text, p) => { if (text.includes(needle)) hits.push(p); });
    view.innerHTML = heading(`Search: ${query}`, `${hits.length.toLocaleString()} matching messages` +
      (hits.length > SEARCH_SHOWN ? `, the first ${SEARCH_SHOWN} shown` : "")) + '<ol class="hits" id="hits"></ol>';
    document.getElementById("hits").innerHTML = hits.slice(0, SEARCH_SHOWN).map((p) => {
      const e = D.events[p];
      const text = searchText(e);
      const at = text.toLowerCase().indexOf(needle);
      const start = Math.max(0, at - 60);
      const snippet = esc(text.slice(start, at)) + "<mark>" + esc(text.slice(at, at + needle.length)) + "</mark>" +
        esc(text.slice(at + needle.length, at + needle.length + 80));
      return `<li><a href="${msgHref(e.i)}">${esc(e.i)}</a> ${agentLink(e.a)} <span class="quiet">${KIND_LABEL[e.k] || ""}</span><p class="snippet">${start ? "…" : ""}${snippet.replace(/\n/g, " ")}</p></li>`;
    }).join("") || '<li class="empty">Nothing found.</li>';
  }

  function problems() {
    view.innerHTML = heading("Problems", `${D.problems.length} found while reading the session`) +
      `<ul class="problems">${D.problems.map((p) => `<li><span class="badge">${esc(p.kind)}</span> ${p.line ? "line " + p.line + ": " : ""}${esc(p.detail)}</li>`).join("") || "<li>None.</li>"}</ul>`;
  }

  function markTree(id) {
    for (const link of document.querySelectorAll("#tree a[aria-current]")) link.removeAttribute("aria-current");
    const current = document.querySelector(`#tree a[data-agent="${CSS.escape(id)}"]`);
    if (current) current.setAttribute("aria-current", "page");
  }

  function route() {
    generation++;
    if (observer) { observer.disconnect(); observer = null; }
    const hash = decodeURIComponent(location.hash.slice(1));
    const [key, ...rest] = hash.split("=");
    const value = rest.join("=");
    if (!hash) {
      const opening = D.session.opening_agent && agentById(D.session.opening_agent);
      return opening ? perspective(opening) : overview();
    }
    if (key === "agent" && agentById(value)) return perspective(agentById(value));
    if (key === "dialog") return dialog(value.split(",").filter(Boolean));
    if (key === "search") return search(value);
    if (hash === "problems") return problems();
    return message(hash);
  }

  function theme() {
    const root = document.documentElement;
    const dark = root.dataset.theme ? root.dataset.theme === "dark" : matchMedia("(prefers-color-scheme: dark)").matches;
    root.dataset.theme = dark ? "light" : "dark";
  }

  document.querySelector(".bar").after(document.getElementById("masking-note")); // made last, shown first
  load().then(async (data) => {
    performance.mark("agentview:head"); // marks for benchmarks/share_file.py
    D = data;
    document.title = (D.session.title || D.session.name) + " · agentview";
    document.getElementById("shared-title").textContent = D.session.title || D.session.name;
    tree();
    if (matchMedia("(max-width: 760px)").matches) document.getElementById("tree-box").open = false; // a phone: the view first
    window.addEventListener("hashchange", route);
    document.getElementById("search-form").addEventListener("submit", (event) => {
      event.preventDefault();
      location.hash = frag("search", document.getElementById("search-input").value);
    });
    document.getElementById("theme-button").addEventListener("click", theme);
    await route();
    performance.mark("agentview:first-view", {detail: {inflated: parts.filter((it) => it.loaded).length, parts: parts.length}});
    document.body.dataset.ready = "1";
    await new Promise((painted) => requestAnimationFrame(() => setTimeout(painted))); // the first view is drawn first
    try {
      await allEvents(); // then the rest, for the views that need every event
    } catch (error) { // a damaged part: the views drawn stay, search and dialogs say they may miss entries
      document.querySelector(".layout").insertAdjacentHTML("beforebegin", damaged(error, "from searches and dialogs"));
      return;
    }
    performance.mark("agentview:every-event");
    document.body.dataset.everyEvent = "1";
    console.info(`agentview: ${D.events.length} events of ${D.agents.length} agents shown`);
  }).catch((error) => {
    console.error(`agentview: the shared file could not be opened: ${error.message}`);
    view.innerHTML = `<p class="error">This file could not be opened: ${esc(error.message)}. It needs a browser with DecompressionStream (Chromium 80+, Firefox 113+, Safari 16.4+).</p>`;
  });
})();
