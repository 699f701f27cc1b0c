// kernelindex: the compare page. Reads ?runs=, fetches each run's JSON twin and the twins of the
// implementation, workload, protocol and environment it names, and aligns them field by field.
// Every address it fetches or links is this site's own: made from a run id, or a page path of
// this site read from a twin and checked first. Fetched text is only ever set as text.
(function () {
  "use strict";

  var HEX16 = /^[0-9a-f]{16}$/;
  var HEX64 = /^[0-9a-f]{64}$/;
  var REFERENCES = [
    ["implementation", "Implementation", "implementationDigest", "ImplementationRevision"],
    ["workload", "Workload", "workloadDigest", "WorkloadCase"],
    ["protocol", "Protocol", "protocolDigest", "BenchmarkProtocol"],
    ["environment", "Environment", "environmentDigest", "ExecutionEnvironment"],
  ];
  var NONE = "—";

  var root, base, status;

  // ---- reading ?runs= -------------------------------------------------------------------

  function shown(token) {
    return token.length > 40 ? token.slice(0, 40) + "…" : token;
  }

  // The runs asked for, or the reason they cannot be compared.
  function parseRuns(text, least, most) {
    var tokens = text.split(/[\s,]+/).filter(Boolean);
    var runs = [];
    var seen = {};
    for (var i = 0; i < tokens.length; i++) {
      var token = tokens[i].toLowerCase();
      var address = /\/runs\/([0-9a-f]{16})\/(?:index\.(?:html|json))?(?:[?#].*)?$/.exec(token);
      var id = null;
      var full = null;
      if (address) {
        id = address[1];
      } else {
        var bare = token.replace(/^sha256:/, "");
        if (HEX64.test(bare)) {
          id = bare.slice(0, 16);
          full = "sha256:" + bare;
        } else if (HEX16.test(bare)) {
          id = bare;
        }
      }
      if (id === null) {
        return { error: "“" + shown(tokens[i]) + "” is not a run: give the 16 hex digits of a " +
          "run's address (runs/<id>/), its sha256 digest, or the address itself." };
      }
      if (seen[id]) return { error: "Run " + id + " is listed twice." };
      seen[id] = true;
      runs.push({ id: id, full: full });
    }
    if (runs.length < least) {
      return { error: runs.length === 0 ? "" : "Only one run: give at least " + least +
        " to compare." };
    }
    if (runs.length > most) {
      return { error: runs.length + " runs: at most " + most + " can be compared at once." };
    }
    return { runs: runs };
  }

  // ---- fetching, from this site only --------------------------------------------------

  // A page path of this site, as a twin links it ("/workloads/x/"), or null.
  function sitePath(value) {
    if (typeof value !== "string" || value.indexOf(base) !== 0) return null;
    if (!/^\/(?:[A-Za-z0-9._~-]+\/)*$/.test(value)) return null;
    if (/\/\.\.?\//.test(value)) return null;
    return value;
  }

  function fetchJson(url) {
    return window.fetch(url, { credentials: "same-origin" }).then(function (response) {
      if (!response.ok) {
        var error = new Error(response.status === 404 ? "not found" : "HTTP " + response.status);
        error.notFound = response.status === 404;
        throw error;
      }
      return response.json();
    });
  }

  function loadRun(asked) {
    return fetchJson(base + "runs/" + asked.id + "/index.json").then(
      function (twin) {
        var digest = twin && twin.digest;
        var document = twin && twin.document;
        if (!twin || twin.kind !== "BenchmarkRun" || typeof digest !== "string" ||
            digest.indexOf("sha256:" + asked.id) !== 0 || (asked.full && digest !== asked.full) ||
            !document || !document.spec) {
          throw new Error("Run " + asked.id + ": its data is not that run's.");
        }
        return twin;
      },
      function (error) {
        if (error.notFound) throw new Error("No run " + asked.id + " in this catalog.");
        throw new Error("Run " + asked.id + ": its data could not be read (" + error.message + ").");
      }
    );
  }

  // What a run references, from its twin's links: null where it is not in this catalog.
  function loadReferences(twin, cache) {
    var links = (twin.derived && twin.derived.links) || {};
    return Promise.all(REFERENCES.map(function (reference) {
      var digest = twin.document.spec[reference[2]];
      var path = sitePath(links[reference[0]]);
      if (!path) return Promise.resolve(null);
      if (!cache[path]) {
        cache[path] = fetchJson(path + "index.json").then(
          function (found) { return found; },
          function () { return null; }
        );
      }
      return cache[path].then(function (found) {
        if (!found || found.kind !== reference[3] || found.digest !== digest || !found.document) {
          return null;
        }
        return { twin: found, path: path };
      });
    }));
  }

  // ---- aligning ---------------------------------------------------------------------------

  // A title of white space alone is none: the name instead, as the site's pages show it.
  function titleOf(metadata) {
    var title = metadata.title;
    return typeof title === "string" && title.trim() ? title : metadata.name;
  }

  function text(value) {
    if (value === null || value === undefined || value === "") return NONE;
    if (Array.isArray(value)) return "[" + value.map(text).join(", ") + "]";
    if (typeof value === "object") return Object.keys(value).length ? JSON.stringify(value) : NONE;
    return String(value);
  }

  function isPlain(value) {
    return value === null || typeof value !== "object";
  }

  // A document's leaves as (path, text), in its order; lists of named items by their name.
  function flatten(value, prefix, into) {
    if (Array.isArray(value)) {
      if (value.every(isPlain)) {
        into.push([prefix, text(value)]);
      } else if (value.every(function (v) { return v && typeof v.name === "string"; })) {
        value.forEach(function (item) {
          var rest = {};
          Object.keys(item).forEach(function (k) { if (k !== "name") rest[k] = item[k]; });
          var keys = Object.keys(rest);
          if (keys.length === 1 && isPlain(rest[keys[0]])) into.push([prefix + "." + item.name, text(rest[keys[0]])]);
          else flatten(rest, prefix + "." + item.name, into);
        });
      } else {
        value.forEach(function (item, i) { flatten(item, prefix + "[" + i + "]", into); });
      }
    } else if (value && typeof value === "object") {
      var keys = Object.keys(value);
      if (!keys.length) into.push([prefix, NONE]);
      keys.forEach(function (k) { flatten(value[k], prefix ? prefix + "." + k : k, into); });
    } else {
      into.push([prefix, text(value)]);
    }
    return into;
  }

  function gpuOf(run) {
    return (run.twin.derived && run.twin.derived.gpu) || run.twin.document.spec.environmentDigest;
  }

  function valueOf(run) {
    var values = run.twin.derived && run.twin.derived.values;
    return values && values.length && typeof values[0].value === "number" ? values[0] : null;
  }

  // Why `run` cannot be ranked against `first`: [] when they are one cohort.
  function differences(first, run) {
    var a = first.twin.document.spec;
    var b = run.twin.document.spec;
    var found = [];
    if (a.workloadDigest !== b.workloadDigest) found.push("workload differs");
    if (a.protocolDigest !== b.protocolDigest) found.push("protocol differs");
    if (a.environmentDigest !== b.environmentDigest) {
      found.push(gpuOf(first) !== gpuOf(run) ? "GPU differs" : "environment differs (same GPU)");
    }
    var x = valueOf(first);
    var y = valueOf(run);
    if (x && y && (x.metric !== y.metric || x.unit !== y.unit)) found.push("metric differs");
    return found;
  }

  // Three significant digits, as the site writes ratios: 268, 2.34, 0.0517, 1,230.
  function significant(value) {
    if (!isFinite(value)) return NONE;
    if (value === 0) return "0";
    if (Math.abs(value) < 1000) {
      var short = value.toPrecision(3);
      if (short.indexOf("e") < 0) return short.replace(/\.$/, "");
    }
    return Math.round(Number(value.toPrecision(3))).toLocaleString("en-US");
  }

  // How `value` compares with the first run's, in words that read as speedups.
  function ratioWords(value, first) {
    var ratio = value.value / first.value;
    if (!isFinite(ratio) || ratio <= 0) return NONE;
    if (value.metric === "latency") {
      if (ratio === 1) return "as fast as run 1";
      return ratio > 1 ? significant(ratio) + "× slower than run 1" : significant(1 / ratio) + "× faster than run 1";
    }
    if (ratio === 1) return "the same as run 1";
    return ratio > 1 ? significant(ratio) + "× more than run 1" : significant(1 / ratio) + "× less than run 1";
  }

  function noiseWords(value, first) {
    var spread = first.spread || value.spread;
    if (value.low == null || value.high == null || first.low == null || first.high == null) {
      return "no spread recorded";
    }
    var range = spread ? spread[0] + "–" + spread[1] : "spread";
    var overlap = value.low <= first.high && first.low <= value.high;
    return overlap ? "within the noise: the " + range + " ranges overlap"
      : "beyond the noise: the " + range + " ranges do not overlap";
  }

  function label(run) {
    return (run.twin.derived && run.twin.derived.implementationLabel) || run.id;
  }

  // The rows of the table: [section, field, [one text per run], [one link per run or null]].
  function alignedRows(runs) {
    var first = runs[0];
    var firstValue = valueOf(first);
    var rows = [];
    function add(section, field, values, links) {
      rows.push({ section: section, field: field, values: values, links: links || null });
    }
    add("Result", "Value", runs.map(function (run) {
      var value = valueOf(run);
      return value ? value.text || String(value.value) : "no value (status " + text(run.twin.document.spec.status) + ")";
    }));
    add("Result", "Spread", runs.map(function (run) {
      var value = valueOf(run);
      return value && value.spreadText ? value.spreadText : NONE;
    }));
    add("Result", "Compared with run 1", runs.map(function (run, i) {
      if (i === 0) return "reference";
      var why = differences(first, run);
      if (why.length) return "not comparable: " + why.join(", ");
      var value = valueOf(run);
      if (!value || !firstValue) return "no value to compare";
      return ratioWords(value, firstValue);
    }));
    add("Result", "Noise", runs.map(function (run, i) {
      var value = valueOf(run);
      if (i === 0 || differences(first, run).length || !value || !firstValue) return NONE;
      return noiseWords(value, firstValue);
    }));
    var derived = runs.map(function (run) { return run.twin.derived || {}; });
    add("Kernel", "Kernel", derived.map(function (d) { return text(d.kernel && d.kernel.title); }),
      derived.map(function (d) { return d.kernel ? sitePath(d.kernel.url) : null; }));
    add("Kernel", "Pass", derived.map(function (d) { return text(d.pass); }));
    add("Kernel", "Implementation", derived.map(function (d) { return text(d.implementationLabel); }));
    add("Kernel", "Provider", derived.map(function (d) { return text(d.provider); }));
    add("Kernel", "Shape", derived.map(function (d) { return text(d.shape); }));
    add("Kernel", "GPU", runs.map(gpuOf));
    var runFields = runs.map(function (run) {
      var document = run.twin.document;
      var spec = document.spec;
      var fields = [["Title", text(document.metadata && document.metadata.title)],
        ["Status", text(spec.status)], ["Observed", text(spec.observedAt)], ["Digest", run.twin.digest]];
      var labels = (document.metadata && document.metadata.labels) || {};
      Object.keys(labels).forEach(function (k) { fields.push(["labels." + k, text(labels[k])]); });
      var native = spec.sourceNative || {};
      ["source", "benchmark", "externalId"].forEach(function (k) {
        if (k in native) fields.push(["sourceNative." + k, text(native[k])]);
      });
      return fields;
    });
    alignSection(rows, "Run", runFields, runs.map(function (run) { return base + "runs/" + run.id + "/"; }));
    REFERENCES.forEach(function (reference, r) {
      var fields = runs.map(function (run) {
        var found = run.references[r];
        var digest = run.twin.document.spec[reference[2]];
        if (!found) return [["Digest", text(digest) + " (not in this catalog)"]];
        var document = found.twin.document;
        var head = [["Title", text(titleOf(document.metadata || {}))], ["Digest", digest]];
        return head.concat(flatten(document.spec, "", []));
      });
      var links = runs.map(function (run) { return run.references[r] ? run.references[r].path : null; });
      alignSection(rows, reference[1], fields, links);
    });
    rows.forEach(function (row) {
      row.differs = row.section !== "Result" && row.values.some(function (v) { return v !== row.values[0]; });
    });
    return rows;
  }

  // One section's fields of every run, aligned: each field once, in the order first seen.
  function alignSection(rows, section, fieldsPerRun, titleLinks) {
    var order = [];
    var byRun = fieldsPerRun.map(function (fields) {
      var found = {};
      fields.forEach(function (pair) {
        if (!(pair[0] in found) && order.indexOf(pair[0]) < 0) order.push(pair[0]);
        found[pair[0]] = pair[1];
      });
      return found;
    });
    order.forEach(function (field) {
      rows.push({
        section: section,
        field: field,
        values: byRun.map(function (found) { return field in found ? found[field] : NONE; }),
        links: field === "Title" ? titleLinks : null,
      });
    });
  }

  // ---- showing ------------------------------------------------------------------------------

  function element(name, attributes, content) {
    var made = document.createElement(name);
    Object.keys(attributes || {}).forEach(function (k) { made.setAttribute(k, attributes[k]); });
    if (content !== undefined) made.textContent = content;
    return made;
  }

  function say(message, problem) {
    status.textContent = "";
    if (message) status.appendChild(element("p", { "class": problem ? "note" : "muted" }, message));
  }

  function verdict(runs) {
    var reasons = [];
    runs.slice(1).forEach(function (run) {
      differences(runs[0], run).forEach(function (why) {
        if (reasons.indexOf(why) < 0) reasons.push(why);
      });
    });
    if (reasons.length) {
      return "Not comparable: " + reasons.join(", ") + ". Runs are ranked only " +
        "against runs of the same workload, protocol and environment; the fields that differ " +
        "are marked below.";
    }
    var first = valueOf(runs[0]);
    var parts = runs.slice(1).map(function (run, i) {
      var value = valueOf(run);
      var words = value && first ? ratioWords(value, first) + " (" + noiseWords(value, first) + ")" : "no value to compare";
      return "run " + (i + 2) + " (" + label(run) + ") is " + words;
    });
    return "Comparable: the same workload, protocol and environment. Run 1 (" + label(runs[0]) +
      ") is the reference; " + parts.join("; ") + ".";
  }

  function table(runs, rows) {
    var target = document.getElementById("compare-table");
    target.textContent = "";
    target.appendChild(element("caption", { "class": "visually-hidden" },
      "The runs side by side, one column each; each field whose values differ is marked “differs”."));
    var head = element("thead");
    var top = element("tr");
    top.appendChild(element("th", { scope: "col" }, "Field"));
    runs.forEach(function (run, i) {
      var cell = element("th", { scope: "col" });
      var link = element("a", { href: base + "runs/" + run.id + "/" }, "Run " + (i + 1));
      cell.appendChild(link);
      cell.appendChild(document.createTextNode(" "));
      cell.appendChild(element("code", {}, run.id));
      cell.appendChild(element("span", { "class": "run-label" }, label(run)));
      top.appendChild(cell);
    });
    head.appendChild(top);
    target.appendChild(head);
    var body = null;
    var section = null;
    rows.forEach(function (row) {
      if (row.section !== section) {
        section = row.section;
        body = element("tbody", { "data-section": section });
        var title = element("tr", { "class": "section" });
        title.appendChild(element("th", { scope: "rowgroup", colspan: String(runs.length + 1) }, section));
        body.appendChild(title);
        target.appendChild(body);
      }
      var line = element("tr", { "class": row.differs ? "differs" : "same" });
      var name = element("th", { scope: "row" }, row.field);
      if (row.differs) {
        name.appendChild(document.createTextNode(" "));
        name.appendChild(element("span", { "class": "differs-tag" }, "differs"));
      }
      line.appendChild(name);
      row.values.forEach(function (value, i) {
        var cell = element("td");
        var href = row.links && row.links[i];
        if (href) cell.appendChild(element("a", { href: href }, value));
        else cell.textContent = value;
        line.appendChild(cell);
      });
      body.appendChild(line);
    });
    Array.prototype.forEach.call(target.tBodies, function (group) {
      if (!group.querySelector("tr.differs") && group.getAttribute("data-section") !== "Result") {
        group.classList.add("all-same");
      }
    });
  }

  // ---- copying ------------------------------------------------------------------------------

  function visibleRows(rows) {
    var only = document.getElementById("compare-only-differs").checked;
    return rows.filter(function (row) { return !only || row.differs || row.section === "Result"; });
  }

  // Controls and line breaks would end a row; bidirectional controls reorder what is shown.
  var INVISIBLE = /[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\s]+/g;

  // Text from the catalog as a Markdown table cell, as sitegen/model/markdown.py writes text:
  // nothing in it can become a link, an image, raw HTML, code, a mention or another cell. `:`
  // and the dot of `www.` too, or GitHub makes a link of a URL in the text (its autolinks).
  function markdownCell(value) {
    return value
      .replace(INVISIBLE, " ")
      .replace(/[\\`*_\[\]()<>|~!&#$:]/g, "\\$&")
      .replace(/(www)\./gi, "$1\\.")
      .replace(/@/g, "@\u200b");
  }

  // A cell a spreadsheet would take for a formula is written as text.
  function csvCell(value) {
    value = value.replace(INVISIBLE, " ");
    if (/^\s*[=+\-@]/.test(value) && !/^-?\d[\d.,]*$/.test(value)) value = "'" + value;
    return /[",]/.test(value) ? "\"" + value.replace(/"/g, "\"\"") + "\"" : value;
  }

  function asText(format, runs, rows) {
    var heads = runs.map(function (run, i) { return "Run " + (i + 1) + " (" + run.id + ", " + label(run) + ")"; });
    var lines = visibleRows(rows).map(function (row) {
      return [row.section, row.field].concat(row.values, [row.differs ? "differs" : ""]);
    });
    var header = ["Section", "Field"].concat(heads, ["Differs"]);
    if (format === "csv") {
      return [header].concat(lines).map(function (cells) { return cells.map(csvCell).join(","); }).join("\r\n") + "\r\n";
    }
    var out = [header, header.map(function () { return "---"; })].concat(lines);
    return out.map(function (cells) { return "| " + cells.map(markdownCell).join(" | ") + " |"; }).join("\n") + "\n";
  }

  function offerText(value) {
    var box = document.getElementById("compare-copy");
    var area = document.getElementById("compare-copy-text");
    box.hidden = false;
    area.value = value;
    area.focus();
    area.select();
  }

  function wireTools(runs, rows) {
    var only = document.getElementById("compare-only-differs");
    var target = document.getElementById("compare-table");
    only.addEventListener("change", function () { target.classList.toggle("only-differs", only.checked); });
    Array.prototype.forEach.call(document.querySelectorAll("button.copy-table"), function (button) {
      button.addEventListener("click", function () {
        var format = button.getAttribute("data-format");
        var value = asText(format, runs, rows);
        var name = format === "csv" ? "CSV" : "Markdown";
        if (!navigator.clipboard) {
          offerText(value);
          return;
        }
        navigator.clipboard.writeText(value).then(
          function () { say("Copied the table as " + name + "."); },
          function () { offerText(value); }
        );
      });
    });
  }

  // ---- the page -----------------------------------------------------------------------------

  function compare(asked) {
    say("Reading " + asked.length + " runs…");
    var cache = {};
    Promise.all(asked.map(function (run) {
      return loadRun(run).then(
        function (twin) { return { ok: true, twin: twin }; },
        function (error) { return { ok: false, error: error.message }; }
      );
    })).then(function (loaded) {
      var failed = loaded.filter(function (r) { return !r.ok; });
      if (failed.length) {
        say(failed.map(function (r) { return r.error; }).join(" ") + " Nothing to compare until every run is found.", true);
        return null;
      }
      return Promise.all(loaded.map(function (r) { return loadReferences(r.twin, cache); })).then(function (references) {
        var runs = loaded.map(function (r, i) {
          return { id: asked[i].id, twin: r.twin, references: references[i] };
        });
        var rows = alignedRows(runs);
        table(runs, rows);
        document.getElementById("compare-verdict").textContent = verdict(runs);
        document.getElementById("compare-result").hidden = false;
        wireTools(runs, rows);
        say("");
        return runs;
      });
    }).catch(function (error) {
      say("The runs could not be compared: " + error.message, true);
    });
  }

  function start() {
    root = document.getElementById("compare");
    if (!root) return;
    base = root.getAttribute("data-base") || "/";
    status = document.getElementById("compare-status");
    var least = Number(root.getAttribute("data-min"));
    var most = Number(root.getAttribute("data-max"));
    var form = document.getElementById("compare-form");
    var input = document.getElementById("compare-runs");
    var asked = new URLSearchParams(window.location.search).getAll("runs").join(",");
    form.hidden = false;
    input.value = asked.split(/[\s,]+/).filter(Boolean).join(", ");
    form.addEventListener("submit", function (event) {
      event.preventDefault();  // the page's policy allows no form submission: navigate instead
      var tokens = input.value.split(/[\s,]+/).filter(Boolean);
      window.location.assign(window.location.pathname + "?runs=" + tokens.map(encodeURIComponent).join(","));
    });
    var parsed = parseRuns(asked, least, most);
    if (parsed.error !== undefined) {
      say(parsed.error || "Give " + least + " to " + most + " runs to compare.", Boolean(parsed.error));
      return;
    }
    compare(parsed.runs);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
