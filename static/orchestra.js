// The little the pages script, kept out of the HTML so the Content-Security-Policy can forbid
// inline script: a field marked data-select-on-click selects its text when clicked.
document.addEventListener("click", function (event) {
  var field = event.target.closest && event.target.closest("[data-select-on-click]");
  if (field && field.select) {
    field.select();
  }
});
