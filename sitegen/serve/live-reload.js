// sitegen serve's live reload, added to each page by the server only (never in a build): the
// server says over server-sent events which build it serves and why the last one failed; a new
// build reloads the page, a failed one shows its report over the last good site.
(() => {
  "use strict";
  const PANEL_ID = "sitegen-build-error";
  // The build this page was read from (the server names it in the tag): a page read before a
  // build that went in while it loaded reloads on its first event.
  const script = document.currentScript;
  let served = (script && script.dataset.build) || null;

  function show(error) {
    let panel = document.getElementById(PANEL_ID);
    if (error === null) {
      if (panel) panel.remove();
      return;
    }
    if (!panel) {
      panel = document.createElement("aside");
      panel.id = PANEL_ID;
      panel.setAttribute("role", "alert");
      panel.style.cssText = [
        "position:fixed", "left:0", "right:0", "bottom:0", "z-index:2147483647",
        "max-height:60vh", "overflow:auto", "margin:0", "padding:12px 16px",
        "background:#2b0b0e", "color:#ffe9ea", "border-top:4px solid #e5484d",
        "font:14px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace",
        "box-shadow:0 -4px 24px rgba(0,0,0,.35)",
      ].join(";");
      document.body.append(panel);
    }
    const heading = document.createElement("strong");
    heading.textContent = "sitegen serve: the last build failed; this is the last good site.";
    heading.style.cssText = "display:block;margin-bottom:8px;color:#ff9592";
    const close = document.createElement("button");
    close.type = "button";
    close.textContent = "×";
    close.setAttribute("aria-label", "Hide until the next build");
    close.style.cssText =
      "float:right;background:none;border:0;color:inherit;font-size:20px;cursor:pointer";
    close.addEventListener("click", () => panel.remove());
    const report = document.createElement("pre");
    report.textContent = error; // text, never markup: the report quotes the content's strings
    report.style.cssText = "margin:0;white-space:pre-wrap;overflow-wrap:anywhere";
    panel.replaceChildren(close, heading, report);
  }

  const events = new EventSource("/__sitegen/events");
  events.addEventListener("build", (event) => {
    const state = JSON.parse(event.data);
    if (served !== null && state.build !== served) {
      location.reload();
      return;
    }
    served = state.build;
    // Settled on the build served: what a test (or a tool) waits for before it looks.
    document.documentElement.dataset.sitegenBuild = served;
    show(state.error);
  });
})();
