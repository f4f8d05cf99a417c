// agentview: the few behaviours htmx does not cover. Pages work without this file.
(function () {
  "use strict";

  function linkTo(anchor) {
    const url = new URL(window.location.href);
    url.hash = encodeURIComponent(anchor);
    return url.toString();
  }

  function reveal(root) {
    root.querySelectorAll(".tree-controls[hidden], .copy-link[hidden], .secrets-toggle[hidden]")
      .forEach((el) => { el.hidden = false; });
  }

  document.addEventListener("click", (event) => {
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
    const copy = event.target.closest(".copy-link");
    if (copy) {
      const url = linkTo(copy.dataset.anchor);
      const done = () => { copy.textContent = "copied"; setTimeout(() => { copy.textContent = "copy link"; }, 1500); };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(url).then(done, () => window.prompt("Copy this link", url));
      } else {
        window.prompt("Copy this link", url);
      }
    }
  });

  document.addEventListener("DOMContentLoaded", () => reveal(document));
  // New fragments arrive through htmx: show their controls too.
  document.addEventListener("htmx:load", (event) => reveal(event.detail.elt.parentNode || document));
})();
