// agentview: every <time data-epoch> (and an entry's <time class="stamp">) said as people say it, in the reader's
// time zone: "3 min ago" within the hour, "today 12:52", "yesterday 09:10", "Sep 3, 12:52", "Sep 3 2024"; the
// exact time (and ISO) on hover.
// The server wrote a UTC fallback; this rewrites it now, after live fragments arrive, and every 30 s.
(function () {
  "use strict";
  const DAY = 86400000;
  const clock = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
  const day = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric" });
  const dayYear = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", year: "numeric" });
  const exact = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "long" });

  function said(moment, now) {
    const ago = now - moment;
    if (ago >= 0 && ago < 60000) return "just now";
    if (ago >= 0 && ago < 3600000) return `${Math.floor(ago / 60000)} min ago`;
    const midnight = new Date(now).setHours(0, 0, 0, 0);
    if (moment >= midnight && moment < midnight + DAY) return `today ${clock.format(moment)}`;
    if (moment >= midnight - DAY && moment < midnight) return `yesterday ${clock.format(moment)}`;
    const sameYear = new Date(moment).getFullYear() === new Date(now).getFullYear();
    return sameYear ? `${day.format(moment)}, ${clock.format(moment)}` : dayYear.format(moment);
  }

  function render(root) {
    const now = Date.now();
    root.querySelectorAll("time[data-epoch], time.stamp").forEach((t) => {
      // an entry's time is as its log wrote it (ISO): read here, the server need not parse it for every entry
      const iso = t.getAttribute("datetime") || "";
      const moment = t.dataset.epoch ? Number(t.dataset.epoch) * 1000 : /^\d{4}-\d\d-\d\dT/.test(iso) ? Date.parse(iso) : NaN;
      if (!Number.isFinite(moment)) return;
      t.textContent = said(moment, now);
      t.title = `${exact.format(moment)} (${t.getAttribute("datetime")})`;
    });
  }

  document.addEventListener("DOMContentLoaded", () => render(document));
  document.addEventListener("htmx:load", (event) => render(event.detail.elt.parentNode || document));
  setInterval(() => render(document), 30000);
})();
