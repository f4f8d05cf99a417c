// agentview flow views: the chart's window control, trace highlights on agent pages, "as of" stepping.
(function () {
  "use strict";
  if (window.agentviewFlow) return;  // several partials may include this file
  window.agentviewFlow = true;

  // A range or select marked data-autosubmit reloads its form's URL when it changes.
  document.addEventListener("change", (event) => {
    const control = event.target.closest("[data-autosubmit]");
    if (control && control.form) control.form.requestSubmit();
  });

  // Agent pages opened with ?trace=MESSAGE mark the entries upstream and downstream of it.
  function highlightTrace() {
    const params = new URLSearchParams(window.location.search);
    const id = params.get("trace");
    const root = document.querySelector("[data-trace-api]");
    if (!id || !root) return;
    const url = new URL(root.dataset.traceApi + encodeURIComponent(id).replace(/%2F/g, "/"), window.location.href);
    if (params.get("at")) url.searchParams.set("at", params.get("at"));
    fetch(url).then((r) => (r.ok ? r.json() : null)).then((data) => {
      if (!data) return;
      const mark = (rows, css) => rows.forEach((r) => {
        const el = document.getElementById(r.message_id);
        if (el) el.classList.add("traced", css);
      });
      mark(data.upstream, "upstream");
      mark(data.downstream, "downstream");
      mark([data.focus], "focus");
      document.body.dataset.traced = id;
    });
  }

  document.addEventListener("DOMContentLoaded", highlightTrace);

  // A frozen session page keeps the focus on its slider, so ← and → keep stepping.
  document.addEventListener("DOMContentLoaded", () => {
    const slider = document.querySelector("#av-at[data-focus]");
    if (slider) slider.focus({ preventScroll: true });
  });

  // "As of event N": , and . step one event back and forward (the links in the banner or the control).
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.closest("input:not([type=range]), textarea, select, [contenteditable]")) return;
    const step = { ",": "prev", ".": "next" }[event.key];
    const link = step && document.querySelector(`a[data-step="${step}"]`);
    if (link) {
      event.preventDefault();
      window.location.assign(link.href);
    }
  });

  // The slider shows the number it will go to while it moves.
  document.addEventListener("input", (event) => {
    if (event.target.id === "av-at") {
      const out = document.getElementById("av-at-value");
      if (out) out.textContent = event.target.value;
    }
  });
})();
