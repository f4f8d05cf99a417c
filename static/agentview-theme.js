// agentview: light, dark or the system's scheme, as this browser's reader chose (localStorage "agentview-theme").
// Loaded in <head> without defer, so <html data-theme> is set before the first paint: no flash of the wrong theme.
(function () {
  "use strict";
  const KEY = "agentview-theme";
  const root = document.documentElement;
  root.classList.add("js");  // CSS may now rely on the scripts (the header menu collapses only then)

  function stored() {
    try { return localStorage.getItem(KEY); } catch (e) { return null; }  // storage may be refused
  }

  function apply(choice) {
    if (choice === "light" || choice === "dark") root.dataset.theme = choice;
    else delete root.dataset.theme;  // follow prefers-color-scheme
  }

  apply(stored());

  document.addEventListener("DOMContentLoaded", () => {
    const select = document.getElementById("av-theme");
    if (!select) return;
    select.value = root.dataset.theme || "system";
    select.closest(".theme-choice").hidden = false;
    select.addEventListener("change", () => {
      try {
        if (select.value === "system") localStorage.removeItem(KEY); else localStorage.setItem(KEY, select.value);
      } catch (e) { /* not kept, but still applied to this page */ }
      apply(select.value);
    });
  });

  // Another tab changed it: follow.
  window.addEventListener("storage", (event) => {
    if (event.key !== KEY) return;
    apply(event.newValue);
    const select = document.getElementById("av-theme");
    if (select) select.value = event.newValue || "system";
  });
})();
