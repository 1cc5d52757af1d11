// pcp console: keys and selection on top of forms that work without script.
(function () {
  "use strict";
  function items() { return Array.prototype.slice.call(document.querySelectorAll(".proposal")); }
  var current = null;
  function focusItem(item, scroll) {
    if (!item) { return; }
    if (current) { current.classList.remove("current"); }
    current = item;
    item.classList.add("current");
    if (scroll) { item.scrollIntoView({block: "nearest"}); }
  }
  function move(step) {
    var list = items();
    if (!list.length) { return; }
    var at = list.indexOf(current);
    focusItem(list[Math.min(list.length - 1, Math.max(0, at + step))], true);
  }
  function press(selector) {
    var el = document.querySelector(selector);
    if (el) { el.click(); }
  }
  function countSelected() {
    var out = document.getElementById("selected-count");
    if (!out) { return; }
    var n = document.querySelectorAll('input[name="selected"]:checked').length;
    out.textContent = n ? n + " selected" : "";
  }
  document.addEventListener("change", function (event) {
    if (event.target && event.target.name === "selected") { countSelected(); }
  });
  document.addEventListener("keydown", function (event) {
    var tag = (event.target && event.target.tagName) || "";
    if (/^(INPUT|TEXTAREA|SELECT)$/.test(tag) && event.target.type !== "checkbox") { return; }
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var key = event.key;
    if (key === "j") { move(1); }
    else if (key === "k") { move(-1); }
    else if (key === "x" && current) {
      var box = current.querySelector('input[name="selected"]');
      box.checked = !box.checked; countSelected();
    }
    else if ((key === "a" || key === "r" || key === "e") && current) {
      var el = current.querySelector('[data-key="' + key + '"]');
      if (el) { el.click(); }
    }
    else if (key === "A") { press('.bulk [data-key="A"]'); }
    else if (key === "R") { press('.bulk [data-key="R"]'); }
    else if (key === "u") { press('#undo-last [data-key="u"]'); }
    else { return; }
    event.preventDefault();
  });
  document.addEventListener("DOMContentLoaded", function () {
    var list = items();
    if (!list.length) { return; }
    var wanted = window.location.hash ? document.getElementById(window.location.hash.slice(1)) : null;
    focusItem(wanted && wanted.classList.contains("proposal") ? wanted : list[0], !!wanted);
    list.forEach(function (item) {
      item.addEventListener("click", function () { focusItem(item, false); });
    });
  });
}());
