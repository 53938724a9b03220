/// The site's one stylesheet: readable type, a calm palette, forms and
/// lists that work from a phone's width to a desktop's.
enum Stylesheet {
    static let text = """
        :root {
          --ink: #1f2623; --muted: #5b6661; --paper: #fbf9f5; --card: #ffffff; --line: #e3ddd2;
          --brand: #2f5d50; --brand-ink: #f4efe6; --accent: #b5562b; --error: #a3261b; --ok: #2f6b3a;
          --radius: 10px; font-size: 17px;
        }
        * { box-sizing: border-box; }
        html { -webkit-text-size-adjust: 100%; }
        body { margin: 0; font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
          color: var(--ink); background: var(--paper); }
        a { color: var(--brand); }
        a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible {
          outline: 3px solid var(--accent); outline-offset: 2px; }
        header.site { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.25rem;
          padding: .75rem 1rem; background: var(--brand); color: var(--brand-ink); }
        header.site a { color: var(--brand-ink); text-decoration: none; }
        .brand { font-weight: 700; font-size: 1.15rem; letter-spacing: .02em; }
        header.site nav ul { display: flex; gap: 1rem; margin: 0; padding: 0; list-style: none; }
        header.site nav a[aria-current="page"] { border-bottom: 2px solid var(--brand-ink); }
        .account { margin-left: auto; display: flex; align-items: center; gap: .75rem; }
        main { max-width: 46rem; margin: 0 auto; padding: 1.25rem 1rem 3rem; overflow-wrap: anywhere; }
        h1 { font-size: 1.6rem; line-height: 1.2; margin: .5rem 0 1rem; }
        h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
        .flash, .notice, .form-error { padding: .6rem .8rem; border-radius: var(--radius); margin: 0 0 1rem; }
        .flash { background: #e6f0e8; color: var(--ok); border: 1px solid #c5dccb; }
        .notice { background: var(--card); border: 1px solid var(--line); }
        .form-error { background: #fbeae7; color: var(--error); border: 1px solid #efc7c0; }
        form.card, .card { background: var(--card); border: 1px solid var(--line); border-radius: var(--radius);
          padding: 1rem; margin: 0 0 1rem; }
        .field { margin: 0 0 .9rem; }
        .field label { display: block; font-weight: 600; margin-bottom: .2rem; }
        .field .hint { margin: 0 0 .25rem; color: var(--muted); font-size: .9rem; }
        input, select, textarea { font: inherit; width: 100%; padding: .55rem .65rem; border: 1px solid #bfb7a9;
          border-radius: 8px; background: #fff; color: var(--ink); }
        input[type="file"] { padding: .4rem; }
        .field.invalid input { border-color: var(--error); }
        .field .error { color: var(--error); margin: .25rem 0 0; font-size: .92rem; }
        button, .button { display: inline-block; font: inherit; font-weight: 600; padding: .55rem 1rem;
          border-radius: 8px; border: 1px solid var(--brand); background: var(--brand); color: var(--brand-ink);
          cursor: pointer; text-decoration: none; }
        button.secondary, .button.secondary { background: transparent; color: var(--brand); }
        button.danger { background: var(--error); border-color: var(--error); color: #fff; }
        button.link { background: none; border: 0; padding: 0; color: inherit; font-weight: 400;
          text-decoration: underline; }
        form.inline { display: inline; margin: 0; }
        .actions { display: flex; flex-wrap: wrap; gap: .6rem; align-items: center; margin: 1rem 0; }
        .toolbar { display: flex; flex-wrap: wrap; gap: .6rem; align-items: end; margin: 0 0 1rem; }
        .toolbar .field { flex: 1 1 12rem; margin: 0; }
        ul.records { list-style: none; padding: 0; margin: 0 0 1rem; background: var(--card);
          border: 1px solid var(--line); border-radius: var(--radius); }
        ul.records li { padding: .7rem .9rem; border-top: 1px solid var(--line); }
        ul.records li:first-child { border-top: 0; }
        ul.records .title { font-weight: 600; display: block; }
        ul.records .subtitle { color: var(--muted); font-size: .92rem; }
        ul.records .title, ul.records .subtitle, .snippet { unicode-bidi: isolate; }
        table { width: 100%; border-collapse: collapse; background: var(--card); }
        .table-scroll { overflow-x: auto; }
        @media (max-width: 32rem) { table { display: block; overflow-x: auto; } }
        th, td { text-align: left; padding: .5rem .6rem; border-bottom: 1px solid var(--line); }
        .pager { display: flex; justify-content: space-between; gap: 1rem; margin: 1rem 0; }
        ul.apps { list-style: none; padding: 0; display: grid; gap: .8rem;
          grid-template-columns: repeat(auto-fit, minmax(13rem, 1fr)); }
        ul.apps a { display: block; padding: 1rem; background: var(--card); border: 1px solid var(--line);
          border-radius: var(--radius); text-decoration: none; color: var(--ink); }
        ul.apps strong { display: block; color: var(--brand); font-size: 1.1rem; }
        ul.apps span { color: var(--muted); }
        img.picture { max-width: 100%; height: auto; border-radius: var(--radius); border: 1px solid var(--line); }
        dl.details { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; }
        dl.details dt { color: var(--muted); }
        dl.details dd { margin: 0; }
        .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
        @media (max-width: 32rem) {
          :root { font-size: 16px; }
          .account { margin-left: 0; width: 100%; }
          main { padding: 1rem .75rem 2.5rem; }
        }
        """
}
