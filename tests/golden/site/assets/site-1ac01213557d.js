// kernelindex: draws the charts from their JSON blocks and wires the copy buttons. No inline
// scripts anywhere, so the pages can forbid them.
(function () {
  "use strict";

  function draw(block) {
    var target = document.getElementById(block.getAttribute("data-chart"));
    if (!target || target.getAttribute("data-drawn")) return;
    target.setAttribute("data-drawn", "1");
    var spec = JSON.parse(block.textContent);
    target.textContent = "";
    window.Plotly.newPlot(target, spec.data, spec.layout, spec.config).then(function () {
      target.on("plotly_click", function (event) {
        var point = event && event.points && event.points[0];
        var url = point && point.customdata;
        // Only our own root-relative run URLs: never navigate anywhere else.
        if (typeof url === "string" && url.charAt(0) === "/" && url.charAt(1) !== "/") {
          window.location.href = url;
        }
      });
    });
  }

  // Each chart is drawn when it comes near the screen: a kernel page holds dozens, and
  // drawing them all before the first one shows made the first one wait.
  function drawCharts() {
    if (typeof window.Plotly === "undefined") return;
    var blocks = document.querySelectorAll('script.chart-spec[type="application/json"]');
    if (!("IntersectionObserver" in window)) {
      Array.prototype.forEach.call(blocks, draw);
      return;
    }
    var byTarget = new Map();
    var observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (!entry.isIntersecting) return;
        observer.unobserve(entry.target);
        draw(byTarget.get(entry.target));
      });
    }, { rootMargin: "600px 0px" });
    Array.prototype.forEach.call(blocks, function (block) {
      var target = document.getElementById(block.getAttribute("data-chart"));
      if (!target) return;
      byTarget.set(target, block);
      observer.observe(target);
    });
  }

  function wireCopyButtons() {
    var buttons = document.querySelectorAll("button.copy[data-copy]");
    Array.prototype.forEach.call(buttons, function (button) {
      if (!navigator.clipboard) return;
      button.hidden = false;
      button.addEventListener("click", function () {
        navigator.clipboard.writeText(button.getAttribute("data-copy")).then(
          function () { button.textContent = "Copied"; },
          function () { button.textContent = "Select the text to copy"; }
        );
      });
    });
  }

  function start() {
    wireCopyButtons();
    drawCharts();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
