// Live regions: an element with an id and data-live-topics="people,coffee"
// is refreshed in place when a change of those apps' records is announced
// on /events. Without this script the page is simply not live.
//
// Open edit forms: a form with an id, data-live-form="people" and
// data-live-source="/people/7/edit" is never refreshed (its fields are the
// person's typing); when a change of its app is announced, the script
// reads the source page and, if the record's version there is not the one
// in the form's hidden "version" field, says so above the form, with a
// button that submits the form: the server then shows theirs beside yours
// and writes nothing.
//
// After a failed submit, the form's error summary (#form-error, an alert
// with tabindex=-1) takes the focus, so that the keyboard and screen
// readers start at the problems.
//
// The connection's state shows in the header (#live-status, a polite live
// region): "Live: connected", "Live: reconnecting…", "Live: offline", in
// words, with data-state="connected|reconnecting|offline" for the style.
(function () {
  'use strict';
  var summary = document.getElementById('form-error');
  if (summary && summary.getAttribute('tabindex') === '-1') { summary.focus(); }
  if (!window.EventSource || !window.fetch || !window.DOMParser) { return; }
  var regions = Array.prototype.filter.call(
    document.querySelectorAll('[data-live-topics]'), function (region) { return region.id; });
  var forms = Array.prototype.filter.call(
    document.querySelectorAll('form[data-live-form][data-live-source]'), function (form) { return form.id; });
  if (regions.length === 0 && forms.length === 0) { return; }

  function topicsOf(region) {
    return region.getAttribute('data-live-topics').split(',')
      .map(function (name) { return name.trim(); })
      .filter(function (name) { return name.length > 0; });
  }
  var wanted = [];
  regions.forEach(function (region) {
    topicsOf(region).forEach(function (topic) {
      if (wanted.indexOf(topic) < 0) { wanted.push(topic); }
    });
  });
  forms.forEach(function (form) {
    var topic = form.getAttribute('data-live-form');
    if (topic && wanted.indexOf(topic) < 0) { wanted.push(topic); }
  });

  // The script's reads of pages say so: the server then leaves the status
  // line a form's redirect left ("Updated ...") to the page the browser
  // is loading meanwhile.
  var reading = { 'Accept': 'text/html', 'X-Records-Live': '1' };

  function versionOf(form) {
    var field = form && form.querySelector('input[type=hidden][name=version]');
    return field ? field.value : null;
  }

  // Says above the form that its record changed (or was deleted); no
  // field of the form is touched.
  function showChanged(form, deleted) {
    var id = form.id + '-changed';
    var notice = document.getElementById(id);
    if (!notice) {
      notice = document.createElement('p');
      notice.id = id;
      notice.className = 'form-error live-changed';
      notice.setAttribute('role', 'alert');
      form.parentNode.insertBefore(notice, form);
    }
    while (notice.firstChild) { notice.removeChild(notice.firstChild); }
    if (deleted) {
      notice.appendChild(document.createTextNode('Deleted by someone else a moment ago: saving will not work.'));
      return;
    }
    notice.appendChild(document.createTextNode('Changed by someone else a moment ago \u2014 '));
    var review = document.createElement('button');
    review.type = 'submit';
    review.className = 'link';
    review.id = form.id + '-review';
    review.setAttribute('form', form.id);
    review.textContent = 'review';
    notice.appendChild(review);
  }

  var checking = {};
  function checkForms(topics) {
    forms.forEach(function (form) {
      if (topics.indexOf(form.getAttribute('data-live-form')) < 0) { return; }
      if (checking[form.id]) { return; }
      var mine = versionOf(form);
      if (!mine) { return; }
      checking[form.id] = true;
      fetch(form.getAttribute('data-live-source'),
        { credentials: 'same-origin', cache: 'no-store', headers: reading })
        .then(function (response) {
          return response.text().then(function (text) {
            if (response.redirected) { return; }
            if (response.status === 404) { showChanged(form, true); return; }
            if (response.status !== 200) { return; }
            var page = new DOMParser().parseFromString(text, 'text/html');
            var stored = versionOf(page.getElementById(form.id));
            if (stored && stored !== versionOf(form)) { showChanged(form, false); }
          });
        })
        .catch(function () { /* offline: the next event tells again */ })
        .then(function () { checking[form.id] = false; });
    });
  }
  if (wanted.length === 0) { return; }

  // A region holding a form the user is typing in is left alone; it is
  // refreshed once the focus leaves it, unless its fields were changed.
  function isEditing(region) {
    var active = document.activeElement;
    if (active && active !== document.body && region.contains(active) &&
        /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName)) { return true; }
    return Array.prototype.some.call(region.querySelectorAll('input, textarea, select'), function (field) {
      if (field.tagName === 'SELECT') {
        return Array.prototype.some.call(field.options, function (option) {
          return option.selected !== option.defaultSelected;
        });
      }
      if (field.type === 'checkbox' || field.type === 'radio') { return field.checked !== field.defaultChecked; }
      if (field.type === 'hidden') { return false; }
      if (field.type === 'file') { return field.value !== ''; }
      return field.value !== field.defaultValue;
    });
  }

  function replaceContents(region, nodes) {
    while (region.firstChild) { region.removeChild(region.firstChild); }
    nodes.forEach(function (node) { region.appendChild(document.importNode(node, true)); });
  }

  // The record is gone: the region says so, with the 404 page's text.
  function showDeleted(region, page) {
    var source = page.querySelector('main .notice') || page.querySelector('main p');
    var text = source && source.textContent.trim() ? source.textContent.trim() : 'This record was deleted.';
    var notice = document.createElement('p');
    notice.className = 'notice live-deleted';
    notice.setAttribute('role', 'status');
    notice.textContent = text;
    replaceContents(region, [notice]);
  }

  var busy = false;
  var again = [];
  function refresh(topics) {
    checkForms(topics);
    var targets = regions.filter(function (region) {
      return topicsOf(region).some(function (topic) { return topics.indexOf(topic) >= 0; });
    });
    if (targets.length === 0) { return; }
    if (busy) {
      topics.forEach(function (topic) { if (again.indexOf(topic) < 0) { again.push(topic); } });
      return;
    }
    busy = true;
    fetch(location.href, { credentials: 'same-origin', cache: 'no-store', headers: reading })
      .then(function (response) {
        return response.text().then(function (text) {
          // A page sent to log-in (the session ended) is not this page.
          if (response.redirected) { return; }
          if (response.status !== 200 && response.status !== 404) { return; }
          var page = new DOMParser().parseFromString(text, 'text/html');
          targets.forEach(function (region) {
            if (isEditing(region)) { region.setAttribute('data-live-stale', ''); return; }
            region.removeAttribute('data-live-stale');
            if (response.status === 404) { showDeleted(region, page); return; }
            var fresh = page.getElementById(region.id);
            if (fresh) { replaceContents(region, Array.prototype.slice.call(fresh.childNodes)); }
          });
        });
      })
      .catch(function () { /* offline: the next event or reconnection refreshes */ })
      .then(function () {
        busy = false;
        if (again.length > 0) {
          var next = again;
          again = [];
          refresh(next);
        }
      });
  }

  regions.forEach(function (region) {
    region.addEventListener('focusout', function () {
      setTimeout(function () {
        if (region.hasAttribute('data-live-stale') && !isEditing(region)) { refresh(topicsOf(region)); }
      }, 0);
    });
  });

  // The indicator, in the header (or at the top of the page without one).
  var indicator = document.createElement('p');
  indicator.id = 'live-status';
  indicator.className = 'live-status';
  indicator.setAttribute('aria-live', 'polite');
  var header = document.querySelector('header.site');
  if (header) { header.appendChild(indicator); } else { document.body.insertBefore(indicator, document.body.firstChild); }
  var stateWords = { connecting: 'Live: connecting\u2026', connected: 'Live: connected',
    reconnecting: 'Live: reconnecting\u2026', offline: 'Live: offline' };
  function showState(state) {
    if (indicator.getAttribute('data-state') === state) { return; }
    indicator.setAttribute('data-state', state);
    indicator.textContent = stateWords[state];
    indicator.title = state === 'connected' ? 'Changes by others show here as they happen.'
      : state === 'offline' ? 'Changes by others will show once the connection is back.' : '';
  }
  showState('connecting');
  window.addEventListener('offline', function () { showState('offline'); });

  var delay = 2000;
  var opened = false;
  function connect() {
    var source = new EventSource('/events?topics=' + encodeURIComponent(wanted.join(',')));
    source.addEventListener('open', function () {
      delay = 2000;
      showState('connected');
      // The page's state, for styles and tests: "open" while it follows.
      document.documentElement.setAttribute('data-live', 'open');
      // Back after a lost connection (a server restart): what changed
      // meanwhile was not announced.
      if (opened) { refresh(wanted); }
      opened = true;
    });
    source.addEventListener('change', function (event) {
      refresh(String(event.data).split(','));
    });
    source.addEventListener('error', function () {
      document.documentElement.setAttribute('data-live', 'reconnecting');
      // The browser reconnects by itself after a dropped stream; after a
      // refusal (a 401 once logged out, a 502 from a proxy) it gives up,
      // so this tries again, less and less often.
      showState(source.readyState === EventSource.CLOSED || navigator.onLine === false ? 'offline' : 'reconnecting');
      if (source.readyState === EventSource.CLOSED) {
        setTimeout(connect, delay);
        delay = Math.min(delay * 2, 60000);
      }
    });
  }
  connect();
})();
