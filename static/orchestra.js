// The little the pages script, kept out of the HTML so the Content-Security-Policy can forbid
// inline script: a field marked data-select-on-click selects its text when clicked.
document.addEventListener("click", function (event) {
  var field = event.target.closest && event.target.closest("[data-select-on-click]");
  if (field && field.select) {
    field.select();
  }
});

// The issued link's Copy button: shown only when a script runs (it is hidden in the HTML, so a
// page without script keeps the selectable field alone). Uses the Clipboard API where the page
// is allowed to, else selects the text and asks the browser to copy it.
(function () {
  function ready(fn) {
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", fn);
    } else {
      fn();
    }
  }
  ready(function () {
    var buttons = document.querySelectorAll("[data-copy]");
    Array.prototype.forEach.call(buttons, function (button) {
      var field = document.getElementById(button.getAttribute("data-copy"));
      var status = document.getElementById("copy-status");
      if (!field) {
        return;
      }
      button.hidden = false;
      function say(text) {
        if (status) {
          status.textContent = text;
        }
      }
      button.addEventListener("click", function () {
        field.focus();
        field.select();
        var done = function () { say(button.getAttribute("data-copied")); };
        var fallback = function () {
          var ok = false;
          try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
          say(ok ? button.getAttribute("data-copied") : button.getAttribute("data-copy-failed"));
        };
        if (navigator.clipboard && navigator.clipboard.writeText) {
          navigator.clipboard.writeText(field.value).then(done, fallback);
        } else {
          fallback();
        }
      });
    });

    // The language switch reloads the page: while a form holds typed input, it is held back
    // with a note instead, so nothing typed is lost.
    var note = document.getElementById("language-note");
    var switches = document.querySelectorAll("[data-lang-switch]");
    var dirty = false;
    document.addEventListener("input", function (event) {
      var form = event.target.closest && event.target.closest("form");
      if (!form || form.classList.contains("logout") || dirty) {
        return;
      }
      dirty = true;
      Array.prototype.forEach.call(switches, function (a) {
        a.setAttribute("aria-disabled", "true");
        a.setAttribute("aria-describedby", "language-note");
      });
    });
    document.addEventListener("submit", function () {
      dirty = false;
    });
    Array.prototype.forEach.call(switches, function (a) {
      a.addEventListener("click", function (event) {
        if (dirty) {
          event.preventDefault();
          if (note) {
            note.hidden = false;
          }
        }
      });
    });

    // The start form (issue 22): choosing another workflow shows its participants' contact
    // rows at once (the form is posted with its "Show its participants" button, which a page
    // without script keeps visible; what was typed is kept).
    var chooser = document.querySelector("[data-choose-on-change]");
    var choose = document.querySelector("[data-choose]");
    if (chooser && choose && chooser.form) {
      choose.hidden = true;
      chooser.addEventListener("change", function () {
        if (chooser.form.requestSubmit) {
          chooser.form.requestSubmit(choose);
        } else {
          choose.click();
        }
      });
    }
  });
})();

// A <time data-local> shows its moment in the reader's own time zone and language (the page's
// lang), with the offset; without script it keeps the UTC text the server wrote.
(function () {
  function localise() {
    var lang = document.documentElement.lang || undefined;
    var times = document.querySelectorAll("time[data-local]");
    Array.prototype.forEach.call(times, function (el) {
      var when = new Date(el.getAttribute("datetime"));
      if (isNaN(when.getTime())) {
        return;
      }
      try {
        el.textContent = new Intl.DateTimeFormat(lang, {
          year: "numeric", month: "long", day: "numeric",
          hour: "2-digit", minute: "2-digit", timeZoneName: "shortOffset"
        }).format(when);
      } catch (e) {
        // An older browser without the offset option keeps the UTC text.
      }
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", localise);
  } else {
    localise();
  }
})();
