// agentview flow views: the chart's window control, trace highlights on agent pages, "as of" stepping.
(function () {
  "use strict";

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
})();
