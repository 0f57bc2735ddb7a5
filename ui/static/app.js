// evalkit UI: the little JavaScript the pages use. Every page reads fine without it.
// - live refresh: a page whose <body> has data-live re-reads itself and swaps #live-region in place;
// - output diffs: [data-diff] blocks get word-level highlighting from jsdiff (vendor/diff-*.js).
// Agent text is only ever inserted as text (textContent), never as HTML.
(function () {
  "use strict";

  function refreshLive() {
    var body = document.body;
    var every = parseInt(body.getAttribute("data-live") || "0", 10);
    var region = document.getElementById("live-region");
    if (!every || !region) return;
    window.setTimeout(function tick() {
      if (document.hidden) { window.setTimeout(tick, every); return; }
      fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (response) { return response.ok ? response.text() : null; })
        .then(function (html) {
          if (html === null) return;
          var fresh = new DOMParser().parseFromString(html, "text/html");
          var next = fresh.getElementById("live-region");
          if (next) region.replaceWith(document.adoptNode(next));
          region = document.getElementById("live-region");
          if (fresh.body.hasAttribute("data-live")) window.setTimeout(tick, every);
          else body.removeAttribute("data-live");
        })
        .catch(function () { window.setTimeout(tick, every * 2); });
    }, every);
  }

  function showDiffs() {
    if (!window.Diff || !window.Diff.diffWords) return;
    document.querySelectorAll("[data-diff]").forEach(function (block) {
      var oldPre = block.querySelector(".diff-old");
      var newPre = block.querySelector(".diff-new");
      if (!oldPre || !newPre) return;
      var parts = window.Diff.diffWords(oldPre.textContent, newPre.textContent);
      oldPre.textContent = "";
      newPre.textContent = "";
      parts.forEach(function (part) {
        if (!part.added) {
          var a = document.createElement(part.removed ? "del" : "span");
          a.textContent = part.value;
          oldPre.appendChild(a);
        }
        if (!part.removed) {
          var b = document.createElement(part.added ? "ins" : "span");
          b.textContent = part.value;
          newPre.appendChild(b);
        }
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    refreshLive();
    showDiffs();
  });
})();
