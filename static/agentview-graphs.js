// agentview pictures (chart, spawn graph): open fitted to their box, zoom (+ − Fit 100%, ctrl+wheel), pan by
// dragging, and keep the chart's lane headers at the top of its box while it scrolls. Pages work without it.
(function () {
  "use strict";
  const MIN = 0.2, MAX = 3, STEP = 1.25;

  function setUp(box) {
    const svg = box.querySelector("svg");
    if (!svg) return;
    const natural = { w: Number(svg.getAttribute("width")), h: Number(svg.getAttribute("height")) };
    const heads = svg.querySelector(".lane-heads");
    let zoom = 1;

    function keepHeads() {  // the chart's lane headers: at the top of the visible part of the box
      if (heads) heads.setAttribute("transform", `translate(0 ${box.scrollTop / zoom})`);
    }

    function zoomTo(z, cx, cy) {
      // Keep the point under (cx, cy) of the box where it is.
      const rect = box.getBoundingClientRect();
      const px = cx === undefined ? box.clientWidth / 2 : cx - rect.left;
      const py = cy === undefined ? box.clientHeight / 2 : cy - rect.top;
      const ux = (box.scrollLeft + px) / zoom, uy = (box.scrollTop + py) / zoom;
      zoom = Math.min(MAX, Math.max(MIN, z));
      svg.setAttribute("width", String(Math.round(natural.w * zoom)));
      svg.setAttribute("height", String(Math.round(natural.h * zoom)));
      box.scrollLeft = ux * zoom - px;
      box.scrollTop = uy * zoom - py;
      keepHeads();
    }

    function fit() {
      const byWidth = box.clientWidth / natural.w;
      // The chart fits its width only (it is read downward); a graph fits both ways. Never larger than drawn,
      // never so small that labels cannot be read.
      const z = box.dataset.fit === "both" ? Math.min(byWidth, box.clientHeight / natural.h) : byWidth;
      zoomTo(Math.max(box.dataset.fit === "both" ? 0.35 : 0.6, Math.min(1, z)));
      const root = svg.querySelector(".spawn-node.root rect");
      if (root) {  // centre the root
        const x = (Number(root.getAttribute("x")) + Number(root.getAttribute("width")) / 2) * zoom;
        box.scrollLeft = x - box.clientWidth / 2;
        box.scrollTop = 0;
      }
    }

    const tools = box.previousElementSibling;
    if (tools && tools.classList.contains("figure-tools")) {
      tools.hidden = false;
      tools.addEventListener("click", (event) => {
        const button = event.target.closest("[data-zoom]");
        if (!button) return;
        const how = button.dataset.zoom;
        if (how === "in") zoomTo(zoom * STEP);
        else if (how === "out") zoomTo(zoom / STEP);
        else if (how === "fit") fit();
        else zoomTo(1);
      });
    }
    box.addEventListener("wheel", (event) => {
      if (!event.ctrlKey) return;  // a plain wheel scrolls the box as usual
      event.preventDefault();
      zoomTo(event.deltaY < 0 ? zoom * STEP : zoom / STEP, event.clientX, event.clientY);
    }, { passive: false });

    // Pan: drag with the mouse (touch screens pan natively). A drag that moved does not follow the link under it.
    let drag = null;
    box.addEventListener("pointerdown", (event) => {
      if (event.pointerType !== "mouse" || event.button !== 0) return;
      drag = { x: event.clientX, y: event.clientY, left: box.scrollLeft, top: box.scrollTop, moved: false };
    });
    window.addEventListener("pointermove", (event) => {
      if (!drag) return;
      const dx = event.clientX - drag.x, dy = event.clientY - drag.y;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 5) return;
      drag.moved = true;
      box.classList.add("dragging");
      box.scrollLeft = drag.left - dx;
      box.scrollTop = drag.top - dy;
    });
    window.addEventListener("pointerup", () => {
      if (drag && drag.moved) box.addEventListener("click", (e) => e.preventDefault(), { capture: true, once: true });
      drag = null;
      box.classList.remove("dragging");
    });
    box.addEventListener("scroll", keepHeads, { passive: true });
    fit();
  }

  function start() { document.querySelectorAll(".figure.zoomable").forEach(setUp); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
