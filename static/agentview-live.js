// agentview: reading log text (raw toggle, expand / collapse all) and live pages that say what changed.
// Pages work without this file: text is rendered on the server, live fragments are htmx's.
(function () {
  "use strict";

  const TRANSCRIPTS = "#av-entries, #av-dialog";

  // --- Text: the per-block "raw" toggle, and expand all / collapse all above each transcript. ---
  function revealRawToggles(root) {
    root.querySelectorAll(".raw-toggle[hidden]").forEach((b) => { b.hidden = false; });
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
      const block = raw.closest(".text-block");
      const on = block.classList.toggle("show-raw");
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

  document.addEventListener("DOMContentLoaded", () => { revealRawToggles(document); addTextControls(); });
  document.addEventListener("htmx:load", (event) => revealRawToggles(event.detail.elt.parentNode || document));
})();
