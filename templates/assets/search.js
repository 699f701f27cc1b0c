// kernelindex: the search page. Pagefind's own interface and index, from the site's pagefind/
// folder (never a CDN); a site built without the index says search is not available.
(function () {
  "use strict";

  function unavailable(root) {
    root.hidden = true;
    var note = document.getElementById("search-unavailable");
    if (note) note.hidden = false;
  }

  var searchedWords = [];

  // The words searched for stay in the address (?q=…), so a search can be linked to.
  function remember(term) {
    searchedWords = (term || "").toLowerCase().split(/\s+/).filter(Boolean);
    var url = new URL(window.location.href);
    if (term) url.searchParams.set("q", term);
    else url.searchParams.delete("q");
    window.history.replaceState(null, "", url.pathname + url.search + url.hash);
    return term;
  }

  // Pagefind shows a page's three sub-results with the most matches, repeats counted: the
  // RMSNorm page's A100 chart, which says "RMSNorm" and "bf16" often, stood beside its H100
  // charts for "rmsnorm h100 bf16". Only the sections holding the most of the words searched
  // for are offered (the page's own first entry kept); where none holds one, all are.
  function closestSections(result) {
    var sections = result.sub_results;
    if (!searchedWords.length || !Array.isArray(sections) || sections.length < 2) return result;
    var page = (result.meta && result.meta.url) || result.url;
    var held = sections.map(function (section) {
      var text = (section.title + " " + section.excerpt.replace(/<[^>]*>/g, " ")).toLowerCase();
      return searchedWords.filter(function (word) { return text.indexOf(word) !== -1; }).length;
    });
    var most = Math.max.apply(null, held);
    if (most > 0) {
      result.sub_results = sections.filter(function (section, i) {
        return held[i] === most || (i === 0 && section.url === page);
      });
    }
    return result;
  }

  function open(root) {
    var bundle = root.getAttribute("data-bundle");
    var example = root.getAttribute("data-example");
    var ui = new window.PagefindUI({
      element: "#search",
      bundlePath: bundle,
      baseUrl: root.getAttribute("data-base"),
      showSubResults: true,
      showImages: false,
      resetStyles: false,
      excerptLength: 24,
      // A kernel page (its charts) before the many short run pages that share its words; its
      // charts' headings weigh most (data-pagefind-weight), run titles less than by default.
      ranking: { metaWeights: { title: 0.5 }, pageLength: 0.2, termSaturation: 2 },
      translations: { placeholder: example ? "Search, e.g. " + example : "Search" },
      processTerm: remember,
      processResult: closestSections,
    });
    labelInput(0);
    var term = new URLSearchParams(window.location.search).get("q");
    // Filters that failed to load count as none: the address's search still runs.
    filtersLoaded(bundle).catch(function () { return 0; }).then(function (groups) {
      if (term) ui.triggerSearch(term);
      else if (typed() && shownGroups() < groups && !anyChecked()) ui.triggerFilters({});
    });
  }

  // Pagefind's interface lists the filter groups of the results it gets first and keeps them
  // (ui.svelte, 1.5.2): a search answered before every filter file has arrived lists fewer
  // groups for good. So the filters are loaded first, through the module the interface imports
  // (one instance, its loaded files shared), and only then does the address's search run; a
  // search typed meanwhile is run again, unless a filter is already chosen.
  function filtersLoaded(bundle) {
    return import(bundle + "pagefind.js").then(function (pagefind) {
      return pagefind.filters();
    }).then(function (filters) {
      return Object.keys(filters || {}).length;
    });
  }

  function typed() {
    var input = document.querySelector("#search .pagefind-ui__search-input");
    return input !== null && input.value.trim() !== "";
  }

  function shownGroups() {
    return document.querySelectorAll("#search .pagefind-ui__filter-name").length;
  }

  function anyChecked() {
    return document.querySelector("#search .pagefind-ui__filter-checkbox:checked") !== null;
  }

  // Pagefind's input has a title only: the page's own visible label names it.
  function labelInput(tries) {
    var input = document.querySelector("#search .pagefind-ui__search-input");
    var label = document.getElementById("search-label");
    if (!input || !label) {
      if (tries < 50) window.requestAnimationFrame(function () { labelInput(tries + 1); });
      return;
    }
    input.id = "search-input";
    label.hidden = false;
  }

  function load(root, bundle) {
    var style = document.createElement("link");
    style.rel = "stylesheet";
    style.href = bundle + "pagefind-ui.css";
    var script = document.createElement("script");
    script.src = bundle + "pagefind-ui.js";
    script.onload = function () {
      if (typeof window.PagefindUI === "undefined") return unavailable(root);
      document.head.appendChild(style);
      open(root);
    };
    script.onerror = function () { unavailable(root); };
    document.head.appendChild(script);
  }

  function start() {
    var root = document.getElementById("search");
    if (!root) return;
    var bundle = root.getAttribute("data-bundle");
    // The index's entry first: a site built without the index says so, and loads nothing.
    window.fetch(bundle + "pagefind-entry.json", { credentials: "same-origin" }).then(
      function (response) {
        if (response.ok) load(root, bundle);
        else unavailable(root);
      },
      function () { unavailable(root); }
    );
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
