// expd dashboard: the only script. Pages read fine without it; it adds
// live run status and copy buttons. Loaded with the page's CSP nonce.
(function () {
  "use strict";
  // Run status: poll while a run is going, then show its results.
  var run = document.querySelector("[data-run-status]");
  if (run) {
    var url = run.getAttribute("data-run-status");
    var done = run.getAttribute("data-run-done");
    var out = run.querySelector("[data-run-text]");
    var poll = function () {
      fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } })
        .then(function (r) { return r.json(); })
        .then(function (s) {
          if (out) { out.textContent = s.text; }
          if (s.status === "completed") { window.location.assign(done); return; }
          if (s.status === "failed") { run.className = "banner error"; return; }
          setTimeout(poll, 1000);
        })
        .catch(function () { setTimeout(poll, 3000); });
    };
    setTimeout(poll, 500);
  }
  // Copy buttons: copy the text of the element named by data-copy.
  document.querySelectorAll("button[data-copy]").forEach(function (b) {
    b.hidden = false;
    b.addEventListener("click", function () {
      var el = document.getElementById(b.getAttribute("data-copy"));
      if (!el || !navigator.clipboard) { return; }
      navigator.clipboard.writeText(el.textContent.trim()).then(function () {
        b.textContent = "Copied";
        setTimeout(function () { b.textContent = "Copy"; }, 2000);
      });
    });
  });
})();
