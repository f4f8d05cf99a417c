// agentview: light, dark or the system's scheme, as this browser's reader chose (localStorage "agentview-theme").
// Loaded in <head> without defer, so <html data-theme> is set before the first paint: no flash of the wrong theme.
(function () {
  "use strict";
  const KEY = "agentview-theme";
  const root = document.documentElement;
  root.classList.add("js");  // CSS may now rely on the scripts (the header menu folds only then)

  function stored() {
    try { return localStorage.getItem(KEY); } catch (e) { return null; }  // storage may be refused
  }

  function apply(choice) {
    if (choice === "light" || choice === "dark") root.dataset.theme = choice;
    else delete root.dataset.theme;  // follow prefers-color-scheme
  }

  function show(choice) {  // the menu's radio buttons say the choice in force
    document.querySelectorAll('input[name="av-theme"]').forEach((r) => { r.checked = r.value === (choice || "system"); });
  }

  apply(stored());

  document.addEventListener("DOMContentLoaded", () => {
    const group = document.querySelector(".theme-choice");
    if (!group) return;
    group.hidden = false;
    show(root.dataset.theme);
    group.addEventListener("change", (event) => {
      const value = event.target.value;
      try {
        if (value === "system") localStorage.removeItem(KEY); else localStorage.setItem(KEY, value);
      } catch (e) { /* not kept, but still applied to this page */ }
      apply(value);
    });
  });

  // Another tab changed it: follow.
  window.addEventListener("storage", (event) => {
    if (event.key !== KEY) return;
    apply(event.newValue);
    show(event.newValue);
  });
})();
