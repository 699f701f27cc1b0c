// kernelindex: draws the charts from their JSON blocks and wires the copy buttons and the
// speed-against-memory shape pickers. No inline scripts anywhere, so the pages can forbid them.
(function () {
  "use strict";

  var dark = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  // The chart specs are written for a light page; these replace its colours on a dark one.
  var DARK = {
    background: "#0d1117",
    text: "#e6edf3",
    grid: "#30363d",
    line: "#6e7681",
    // The palette's black line would vanish on a dark page.
    colours: { "#000000": "#e6edf3" }
  };

  function themed(spec) {
    var copy = JSON.parse(JSON.stringify(spec));
    if (!dark || !dark.matches) return copy;
    var layout = copy.layout || {};
    layout.paper_bgcolor = DARK.background;
    layout.plot_bgcolor = DARK.background;
    layout.font = Object.assign({}, layout.font, { color: DARK.text });
    ["xaxis", "yaxis"].forEach(function (name) {
      if (layout[name]) {
        layout[name].gridcolor = DARK.grid;
        layout[name].linecolor = DARK.line;
      }
    });
    (copy.data || []).forEach(function (trace) {
      ["line", "marker", "error_x", "error_y"].forEach(function (part) {
        var style = trace[part];
        if (style && DARK.colours[style.color]) style.color = DARK.colours[style.color];
        if (style && style.line && DARK.colours[style.line.color]) {
          style.line.color = DARK.colours[style.line.color];
        }
      });
      if (trace.textfont === undefined && trace.mode && trace.mode.indexOf("text") >= 0) {
        trace.textfont = { color: DARK.text };
      }
    });
    copy.layout = layout;
    return copy;
  }

  // Each drawn chart, with how to get its current spec: redrawn when the colour scheme changes.
  var drawn = [];

  function plot(target, spec, first) {
    var shown = themed(spec);
    var call = first ? window.Plotly.newPlot : window.Plotly.react;
    return call(target, shown.data, shown.layout, shown.config);
  }

  function followClicks(target) {
    target.on("plotly_click", function (event) {
      var point = event && event.points && event.points[0];
      var url = point && point.customdata;
      // Only our own root-relative run URLs: never navigate anywhere else.
      if (typeof url === "string" && url.charAt(0) === "/" && url.charAt(1) !== "/") {
        window.location.href = url;
      }
    });
  }

  function draw(block) {
    var target = document.getElementById(block.getAttribute("data-chart"));
    if (!target || target.getAttribute("data-drawn")) return;
    target.setAttribute("data-drawn", "1");
    var parsed = JSON.parse(block.textContent);
    var current = function () { return parsed; };
    if (block.classList.contains("frontier-spec")) current = frontier(target, parsed);
    target.textContent = "";
    drawn.push({ target: target, spec: current });
    plot(target, current(), true).then(function () { followClicks(target); });
  }

  // A speed-against-memory chart holds one spec per shape: its picker chooses which is drawn.
  function frontier(target, specs) {
    var picker = document.querySelector('select.frontier-shape[data-chart="' + target.id + '"]');
    var index = function () {
      var chosen = picker ? Number(picker.value) : specs.length - 1;
      return chosen >= 0 && chosen < specs.length ? chosen : specs.length - 1;
    };
    if (picker) {
      picker.closest(".frontier-controls").hidden = false;
      picker.addEventListener("change", function () {
        var spec = specs[index()];
        var summary = document.getElementById(target.id + "-summary");
        if (summary) summary.textContent = spec.summary;
        plot(target, spec, false);
      });
    }
    return function () { return specs[index()]; };
  }

  // Each chart is drawn when it comes near the screen: a kernel page holds dozens, and
  // drawing them all before the first one shows made the first one wait.
  function drawCharts() {
    if (typeof window.Plotly === "undefined") return;
    var blocks = document.querySelectorAll(
      'script.chart-spec[type="application/json"], script.frontier-spec[type="application/json"]'
    );
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
    if (dark && dark.addEventListener) {
      dark.addEventListener("change", function () {
        drawn.forEach(function (chart) { plot(chart.target, chart.spec(), false); });
      });
    }
  }

  // The regressions page: rows shown by kernel, GPU, pass and kind (all shown without script).
  function wireStepFilters() {
    var form = document.querySelector("form.step-filters");
    var table = document.querySelector("table.steps-table");
    if (!form || !table) return;
    var selects = form.querySelectorAll("select[data-filter]");
    var rows = table.querySelectorAll("tbody tr");
    var count = form.querySelector("output.step-count");
    var fromHash = new URLSearchParams(window.location.hash.slice(1));
    Array.prototype.forEach.call(selects, function (select) {
      var wanted = fromHash.get(select.getAttribute("data-filter"));
      if (wanted !== null) select.value = wanted;
    });
    function apply() {
      var shown = 0;
      Array.prototype.forEach.call(rows, function (row) {
        var keep = Array.prototype.every.call(selects, function (select) {
          return !select.value || row.getAttribute("data-" + select.getAttribute("data-filter")) === select.value;
        });
        row.hidden = !keep;
        if (keep) shown += 1;
      });
      if (count) count.textContent = shown + " of " + rows.length + " shown";
    }
    Array.prototype.forEach.call(selects, function (select) { select.addEventListener("change", apply); });
    form.hidden = false;
    apply();
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
    wireStepFilters();
    drawCharts();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
