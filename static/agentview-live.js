// agentview: reading log text (raw toggle, expand / collapse all) and live pages that say what changed.
// Pages work without this file: text is rendered on the server, live fragments are htmx's.
(function () {
  "use strict";

  const TRANSCRIPTS = "#av-entries, #av-dialog";
  const ENTRY = ".entry, .dialog-item";

  // --- Text: each entry's "raw" toggle, and expand all / collapse all above each transcript. ---
  // An entry's toggle is shown once it holds a text rendered from Markdown: `root` is what was loaded, a page
  // or a fragment (a result appended into its call's entry may be the first such text).
  function revealRawToggles(root) {
    const entries = new Set();
    root.querySelectorAll(".text-block.has-md").forEach((block) => { entries.add(block.closest(ENTRY)); });
    entries.forEach((entry) => {
      const toggle = entry && entry.querySelector(":scope > .raw-toggle");
      if (toggle) toggle.hidden = false;
    });
  }

  function addTextControls() {
    document.querySelectorAll(TRANSCRIPTS).forEach((list) => {
      if (list.previousElementSibling && list.previousElementSibling.classList.contains("text-controls")) return;
      const bar = document.createElement("div");
      bar.className = "text-controls";
      bar.setAttribute("role", "group");
      bar.setAttribute("aria-label", "Long texts");
      for (const [action, label] of [["expand", "Expand all texts"], ["collapse", "Collapse all texts"]]) {
        const b = document.createElement("button");
        b.type = "button";
        b.dataset.long = action;
        b.textContent = label;
        bar.appendChild(b);
      }
      list.parentNode.insertBefore(bar, list);
    });
  }

  document.addEventListener("click", (event) => {
    const raw = event.target.closest(".raw-toggle");
    if (raw) {
      const on = raw.closest(ENTRY).classList.toggle("show-raw");
      raw.setAttribute("aria-pressed", on ? "true" : "false");
      return;
    }
    const long = event.target.closest("[data-long]");
    if (long) {
      const open = long.dataset.long === "expand";
      document.querySelectorAll(TRANSCRIPTS).forEach((list) => {
        list.querySelectorAll("details.long").forEach((d) => { d.open = open; });
      });
    }
  });

  // --- Focused (the conversation only) or Full: one switch, remembered. Focused folds each tool call to its
  // one line (CSS hides the rest); Full opens them. A call the reader opened or closed by hand stays so until the
  // switch is used again. ---
  const VIEW_KEY = "agentview-view";
  function storedView() {
    try { return localStorage.getItem(VIEW_KEY) === "focused" ? "focused" : "full"; } catch (e) { return "full"; }
  }
  function applyView(root, view) {
    root.querySelectorAll("details.call-body").forEach((d) => { d.open = view === "full"; });
  }
  function setView(view, store) {
    document.documentElement.dataset.view = view;
    document.querySelectorAll(".view-mode").forEach((group) => {
      group.hidden = false;
      group.querySelectorAll("button[data-view]").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.view === view)));
    });
    applyView(document, view);
    if (store) { try { localStorage.setItem(VIEW_KEY, view); } catch (e) { /* private mode: not remembered */ } }
  }
  document.addEventListener("click", (event) => {
    const b = event.target.closest(".view-mode button[data-view]");
    if (b) setView(b.dataset.view, true);
  });

  // --- Live: new entries flash, a "N new below" pill when the reader is not at the bottom, follow. ---
  let unseen = [];  // new entries below the fold, oldest first
  let following = false;

  function atBottom() {
    return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 80;
  }

  function pill() {
    let p = document.getElementById("av-new-below");
    if (!p) {
      p = document.createElement("button");
      p.type = "button";
      p.id = "av-new-below";
      p.className = "new-below";
      p.hidden = true;
      p.setAttribute("aria-live", "polite");
      document.body.appendChild(p);
    }
    return p;
  }

  function showPill() {
    unseen = unseen.filter((el) => el.isConnected && el.getBoundingClientRect().top > window.innerHeight);
    const p = pill();
    p.hidden = unseen.length === 0;
    p.textContent = unseen.length === 1 ? "1 new below" : `${unseen.length} new below`;
  }

  function arrived(entries) {
    entries.forEach((el) => {
      el.classList.add("av-new");
      el.addEventListener("animationend", () => el.classList.remove("av-new"), { once: true });
    });
    if (following) {
      entries[entries.length - 1].scrollIntoView({ block: "end" });
      return;
    }
    unseen = unseen.concat(entries);
    showPill();
  }

  function watchTranscripts() {
    document.querySelectorAll(TRANSCRIPTS).forEach((list) => {
      const known = new Set(Array.from(list.children).map((el) => el.id));
      new MutationObserver((records) => {
        const fresh = [];
        records.forEach((r) => r.addedNodes.forEach((n) => {
          if (n.nodeType === 1 && n.matches(ENTRY) && !known.has(n.id)) { known.add(n.id); fresh.push(n); }
        }));
        if (fresh.length) arrived(fresh);
      }).observe(list, { childList: true });
    });
  }

  function addFollow() {
    const bar = document.querySelector(".text-controls");
    if (!bar || !document.getElementById("av-poller") || bar.querySelector(".follow")) return;
    const label = document.createElement("label");
    label.className = "follow";
    const box = document.createElement("input");
    box.type = "checkbox";
    box.id = "av-follow";
    label.append(box, " follow new entries");
    bar.appendChild(label);
    box.addEventListener("change", () => {
      following = box.checked;
      if (following) {
        const list = document.querySelector(TRANSCRIPTS);
        const last = list && list.lastElementChild;
        if (last) last.scrollIntoView({ block: "end" });
        unseen = [];
        showPill();
      }
    });
  }

  document.addEventListener("click", (event) => {
    if (event.target.id !== "av-new-below") return;
    const first = unseen.find((el) => el.isConnected);
    if (first) first.scrollIntoView({ block: "start" });
    unseen = [];
    showPill();
  });
  window.addEventListener("scroll", () => { if (unseen.length) showPill(); }, { passive: true });

  // The slider's live range: replaced with the poll's, unless the reader is moving it (then only its end).
  document.addEventListener("htmx:oobBeforeSwap", (event) => {
    const d = event.detail;
    if (!d.target || d.target.id !== "av-as-of-control") return;
    const slider = document.getElementById("av-at");
    const moved = slider && (document.activeElement === slider || slider.value !== slider.max);
    if (!moved) return;
    const fresh = d.fragment && d.fragment.querySelector ? d.fragment.querySelector("#av-at") : null;
    if (fresh) {
      slider.max = fresh.max;
      const total = document.getElementById("av-at-total");
      if (total) total.textContent = fresh.max;
    }
    d.shouldSwap = false;
  });

  // An agent page's rail drawn again by its poll (an agent appeared) keeps the reader's place: focus stays on the
  // same agent's link (the rail may be an open drawer, which holds focus).
  let railFocus = null;
  document.addEventListener("htmx:oobBeforeSwap", (event) => {
    const target = event.detail.target;
    if (target && target.id === "av-agent-tree" && target.contains(document.activeElement)) {
      railFocus = document.activeElement.getAttribute("href");
    }
  });

  function refocusRail(rail) {
    const link = railFocus && Array.from(rail.querySelectorAll("a[href]")).find((a) => a.getAttribute("href") === railFocus);
    railFocus = null;
    if (link) link.focus();
  }

  // A call's state as a live poll redraws it (entry_parts.call_redrawn) says whether the call failed: its box
  // follows, so a result that arrives as an error turns the call red as a page drawn now would show it.
  function markCall(state) {
    const call = state.closest(".call");
    if (call) call.classList.toggle("failed", state.querySelector(".badge.failed") !== null);
  }

  document.addEventListener("DOMContentLoaded", () => {
    setView(storedView(), false);
    revealRawToggles(document);
    addTextControls();
    addFollow();
    watchTranscripts();
  });
  document.addEventListener("htmx:load", (event) => {
    if (event.detail.elt.matches(".call-state")) markCall(event.detail.elt);
    if (event.detail.elt.id === "av-agent-tree") refocusRail(event.detail.elt);
    revealRawToggles(event.detail.elt.parentNode || document);
    if (storedView() === "focused") applyView(event.detail.elt, "focused");
  });
})();
