// agentview: the few behaviours htmx does not cover. Pages work without this file.
(function () {
  "use strict";

  function linkTo(anchor) {
    const url = new URL(window.location.href);
    url.hash = encodeURIComponent(anchor);
    return url.toString();
  }

  // Put `text` on the clipboard (the button says so for a moment), or offer it to copy by hand.
  function copyText(button, text, label, ask) {
    const done = () => { button.textContent = "copied"; setTimeout(() => { button.textContent = label; }, 1500); };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, () => window.prompt(ask, text));
    } else {
      window.prompt(ask, text);
    }
  }

  function reveal(root) {
    root.querySelectorAll(".tree-controls[hidden], .copy-link[hidden], .secrets-toggle[hidden], .keys-button[hidden], .menu-button[hidden], .drawer-button[hidden], .drawer-close[hidden], .sort-menu[hidden], .copy-error[hidden]")
      .forEach((el) => { el.hidden = false; });
  }

  // --- Folded panels: the header's menu (theme, secrets, keys) and, on a phone, a page's rail as a drawer over the
  // content. A button opens its panel and focus moves in (to what the reader came for: the chosen setting, the
  // current agent); Esc, the panel's close button or a click outside closes it, focus back on its button. ---
  const OPENERS = ".menu-button, .drawer-button";
  const FIRST = ["a[aria-current]", "input:checked", "a.agent-name", "input, button:not(.drawer-close), a"];

  function panelOf(button) { return document.getElementById(button.getAttribute("aria-controls")); }

  // `focusFirst`: false when the caller places focus itself (a key that moves in the drawer's tree).
  function setOpen(button, open, focusFirst = true) {
    const panel = panelOf(button);
    button.setAttribute("aria-expanded", String(open));
    panel.classList.toggle("open", open);
    if (button.matches(".drawer-button")) modal(panel, open && button.getClientRects().length > 0);
    if (!open || !focusFirst) return;
    const first = FIRST.map((s) => panel.querySelector(s)).find(Boolean);
    if (first) first.focus();
  }

  function closeMenu(refocus) {
    document.querySelectorAll(".menu-button[aria-expanded=true], .drawer-button[aria-expanded=true]").forEach((b) => {
      const inside = panelOf(b).contains(document.activeElement);
      setOpen(b, false);
      if (refocus && inside) b.focus();
    });
  }

  // An open drawer covers the page as a modal dialog does (the WAI-ARIA dialog pattern): a click beside it only
  // closes it (it must not follow a link it hid); Tab and Shift-Tab cycle inside it, and focus sent elsewhere (by a
  // script, a screen reader) comes back. Not a <dialog>: on a wide screen the same element is the rail beside the
  // content, so it is a dialog only while it is open as a drawer.
  function modal(panel, on) {
    if (on) {
      panel.setAttribute("role", "dialog");
      panel.setAttribute("aria-modal", "true");
    } else {
      panel.removeAttribute("role");
      panel.removeAttribute("aria-modal");
    }
  }

  function openDrawer() {
    const button = document.querySelector(".drawer-button[aria-expanded=true]");
    return button && button.getClientRects().length ? panelOf(button) : null;  // the button shows: it is a drawer
  }

  function beside(event) {
    const drawer = openDrawer();
    return drawer && !drawer.contains(event.target) && !event.target.closest(".drawer-button");
  }

  document.addEventListener("mousedown", (event) => { if (beside(event)) event.preventDefault(); }, true);
  document.addEventListener("click", (event) => {
    if (!beside(event)) return;
    event.preventDefault();
    event.stopPropagation();
    closeMenu(true);
  }, true);
  const FOCUSABLE = "a[href], button:not([disabled]), input:not([disabled]):not([type=hidden]), select:not([disabled]), " +
    "textarea:not([disabled]), summary, [tabindex]:not([tabindex='-1'])";

  function stops(panel) {  // what Tab reaches in it, in order (a closed <details> hides its content: no box)
    return Array.from(panel.querySelectorAll(FOCUSABLE)).filter((el) => el.getClientRects().length > 0);
  }

  document.addEventListener("keydown", (event) => {
    if (event.key !== "Tab" || event.defaultPrevented || document.querySelector("dialog[open]")) return;
    const drawer = openDrawer();
    const list = drawer ? stops(drawer) : [];
    if (!list.length) return;
    const [first, last] = [list[0], list[list.length - 1]];
    const here = document.activeElement;
    if (!drawer.contains(here) || here === (event.shiftKey ? first : last) || here === drawer) {
      event.preventDefault();
      (event.shiftKey ? last : first).focus();
    }
  });
  document.addEventListener("focusin", (event) => {
    if (!beside(event) || document.querySelector("dialog[open]")) return;  // the keys' help may cover the drawer
    const first = stops(openDrawer())[0];
    if (first) first.focus();
  });
  window.addEventListener("resize", () => {  // widened past a phone's width, the drawer is the rail again
    const button = document.querySelector(".drawer-button[aria-expanded=true]");
    if (button && !button.getClientRects().length) setOpen(button, false);
  });

  document.addEventListener("click", (event) => {
    const opener = event.target.closest(OPENERS);
    if (opener) {
      setOpen(opener, opener.getAttribute("aria-expanded") !== "true");
      return;
    }
    if (event.target.closest(".drawer-close")) {
      closeMenu(true);
      return;
    }
    if (!event.target.closest(".menu-panel, .drawer")) closeMenu(false);
    const treeButton = event.target.closest("[data-tree]");
    if (treeButton) {
      const open = treeButton.dataset.tree === "expand";
      document.querySelectorAll("#av-tree details").forEach((d) => { d.open = open; });
      return;
    }
    const secrets = event.target.closest(".secrets-toggle");
    if (secrets) {
      // A cookie of this browser only (never in the URL), dropped when the browser closes.
      document.cookie = secrets.dataset.reveal === "1"
        ? "agentview_reveal=1; path=/; SameSite=Strict"
        : "agentview_reveal=; path=/; SameSite=Strict; max-age=0";
      window.location.reload();
      return;
    }
    const copyError = event.target.closest(".copy-error");
    if (copyError) {  // a failure's error text (the Failures page, a failed result)
      copyText(copyError, copyError.dataset.copy, "copy", "Copy this error");
      return;
    }
    const copy = event.target.closest(".copy-link");
    if (copy) {
      copyText(copy, linkTo(copy.dataset.anchor), "copy link", "Copy this link");
    }
  });

  // The rail's sessions switcher: its box keeps the rows whose text holds every word typed.
  document.addEventListener("input", (event) => {
    if (!event.target.matches(".switcher-filter")) return;
    const words = event.target.value.toLowerCase().split(/\s+/).filter(Boolean);
    event.target.parentNode.querySelectorAll(".switcher-list > li").forEach((li) => {
      const text = li.textContent.toLowerCase();
      li.hidden = !words.every((w) => text.includes(w));
    });
  });

  // A page asked of a session still being read (a 503 with Retry-After): ask again until it is there, then open it.
  function reloadWhenReady() {
    const waiting = document.querySelector("[data-reload-when-ready]");
    if (!waiting) return;
    const every = 1000 * Math.max(1, Number(waiting.dataset.reloadWhenReady) || 1);
    const ask = () => fetch(window.location.href, { method: "HEAD", cache: "no-store" })
      .then((answer) => { if (answer.status === 503) setTimeout(ask, every); else window.location.reload(); })
      .catch(() => setTimeout(ask, every));
    setTimeout(ask, every);
  }

  document.addEventListener("DOMContentLoaded", () => { reveal(document); revealTarget(); reloadWhenReady(); });
  window.addEventListener("hashchange", revealTarget);
  // New fragments arrive through htmx: show their controls too.
  document.addEventListener("htmx:load", (event) => reveal(event.detail.elt.parentNode || document));

  // --- A linked message (a search hit): open the collapsed tree nodes, long text and rewound branch hiding it. ---
  function revealTarget() {
    let target = null;
    try { target = document.getElementById(decodeURIComponent(window.location.hash.slice(1))); } catch (e) { return; }
    if (!target) return;
    for (let p = target.parentElement; p; p = p.parentElement) {
      if (p.tagName === "DETAILS") p.open = true;
    }
    target.querySelectorAll("details.long, details.rewound-branch").forEach((d) => { d.open = true; });
    const drawer = target.closest(".drawer");  // "Skip to the agents" on a phone: the drawer opens
    const opener = drawer && document.querySelector(`.drawer-button[aria-controls="${drawer.id}"]`);
    if (opener && opener.getClientRects().length && opener.getAttribute("aria-expanded") !== "true") setOpen(opener, true);
    const node = target.closest("li.node");
    if (node) node.querySelector("details").open = true;
    // The jump itself focused the target before this event came: a Tab pressed in between has moved on
    // into it, and is not undone.
    const item = target.closest(ITEMS) || target;
    const within = item.contains(document.activeElement) && document.activeElement !== item;
    current(item, !within);
    target.scrollIntoView({ block: "center" });
  }

  // --- Keyboard: Ctrl-K and / search, j/k move, o/Enter open, [ ] agents, g s sessions, ? help (_keys.html). ---
  const ITEMS = "#av-entries > .entry, #av-dialog > .dialog-item, #av-hits > .search-hit, #av-tree li.node, " +
    "#av-sessions tr.session-row";
  const AGENTS = "#av-tree li.node, ul.agent-tree li";  // a rail's agents (the session page's tree, an agent page's)
  let pending = "";  // the first key of a two-key shortcut (g s)
  let focused = null;

  // An open drawer is modal: the keys move between its agents. A phone's closed drawer holding the session's tree
  // (its only list) is opened by a key that moves, so that j/k and [ ] reach the agents at any width.
  function items() {
    const drawer = openDrawer();
    const found = drawer ? drawer.querySelectorAll(AGENTS) : document.querySelectorAll(ITEMS);
    return Array.from(found).filter((el) => el.getClientRects().length > 0);
  }

  function showTree() {
    const opener = document.querySelector(".drawer-button[aria-expanded=false]");
    if (!opener || !opener.getClientRects().length || !panelOf(opener).querySelector("#av-tree li.node")) return false;
    setOpen(opener, true, false);
    return true;
  }

  function current(el, focus = true) {
    if (focused) focused.classList.remove("kb-current");
    focused = el;
    if (!el) return;
    el.classList.add("kb-current");
    if (!focus) return;
    if (el.matches(AGENTS)) {
      el.querySelector("a.agent-name").focus();
    } else {
      if (!el.hasAttribute("tabindex")) el.tabIndex = -1;
      el.focus({ preventScroll: true });
    }
    el.scrollIntoView({ block: "nearest" });
  }

  function move(step) {
    let list = items();
    if (!list.length && showTree()) list = items();
    if (!list.length) return;
    const here = document.activeElement && document.activeElement.closest(`${ITEMS}, ${AGENTS}`);
    const from = list.indexOf(here || focused);
    const next = from < 0 ? (step > 0 ? 0 : list.length - 1) : Math.min(list.length - 1, Math.max(0, from + step));
    current(list[next]);
  }

  function open(el) {
    const link = el.querySelector("a.hit-link, a.agent-name, a.session-link");
    if (link) { link.click(); return; }
    const long = el.querySelectorAll("details.long");
    if (long.length) {
      const show = !Array.from(long).every((d) => d.open);
      long.forEach((d) => { d.open = show; });
      return;
    }
    const message = el.querySelector(".ids a.msg");
    if (message) message.click();
  }

  function showKeys() {
    const help = document.getElementById("av-keys");
    if (help && !help.open) help.showModal();
  }

  document.addEventListener("click", (event) => {
    if (event.target.closest("[data-keys-help]")) showKeys();
  });

  function focusSearch(event) {
    const box = document.getElementById("av-search-q");
    if (box) { event.preventDefault(); closeMenu(false); box.focus(); box.select(); }  // an open drawer covers it
  }

  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === "k") {
      focusSearch(event);  // in a field too: it is how one gets to the search from anywhere
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    if (document.querySelector("dialog[open]")) return;  // the help dialog handles its own keys (Esc: itself only)
    if (event.key === "Escape") closeMenu(true);
    const typing = event.target.closest("input, textarea, select, [contenteditable]");
    if (typing) {
      if (event.key === "Escape" && event.target.id === "av-search-q") event.target.blur();
      return;
    }
    const key = event.key;
    const previous = pending;
    pending = key === "g" ? "g" : "";
    if (previous === "g" && key === "s") {
      const home = document.querySelector("a.brand");
      if (home) { event.preventDefault(); home.click(); }
    } else if (key === "/") {
      focusSearch(event);
    } else if (key === "?") {
      event.preventDefault();
      showKeys();
    } else if (key === "j" || key === "k") {
      event.preventDefault();
      move(key === "j" ? 1 : -1);
    } else if (key === "o" || (key === "Enter" && event.target.matches(ITEMS))) {
      const el = document.activeElement && document.activeElement.closest(ITEMS) || focused;
      if (el) { event.preventDefault(); open(el); }
    } else if (key === "[" || key === "]") {
      const link = document.querySelector(`a[data-key="${key}"]`);
      if (link) { event.preventDefault(); link.click(); } else if (document.getElementById("av-tree")) { move(key === "]" ? 1 : -1); }
    }
  });
})();
