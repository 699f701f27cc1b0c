// kernelindex: draws the charts from their JSON blocks and wires the copy buttons. No inline
// scripts anywhere, so the pages can forbid them.
(function () {
  "use strict";

  function drawCharts() {
    if (typeof window.Plotly === "undefined") return;
    var blocks = document.querySelectorAll('script.chart-spec[type="application/json"]');
    Array.prototype.forEach.call(blocks, function (block) {
      var target = document.getElementById(block.getAttribute("data-chart"));
      if (!target) return;
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
