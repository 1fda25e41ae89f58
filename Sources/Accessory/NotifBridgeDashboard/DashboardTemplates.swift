import Mustache

/// The pages, as Mustache templates compiled into the binary: the dashboard needs no files and
/// no network beyond the accessory (it runs offline, on an accessory's own screen). `{{x}}`
/// escapes HTML; no template uses the unescaped `{{{x}}}` form for a value from a peer. Each
/// peer value sits in an element with `dir="auto"` or in a `<bdi>`, which isolates it: an
/// unclosed right-to-left override in an app's name cannot reverse the bundle ID beside it.
enum DashboardTemplates {
    static let library: MustacheLibrary = {
        MustacheContentTypes.register(ScalarHTML(), named: ScalarHTML.name)
        var library = MustacheLibrary()
        do {
            // Every template, partials too: a partial starts again with swift-mustache's own.
            for (name, text) in sources { try library.register("{{% CONTENT_TYPE: \(ScalarHTML.name) }}" + text, named: name) }
        } catch {
            preconditionFailure("a dashboard template does not parse: \(error)")
        }
        return library
    }()

    /// HTML escaping by Unicode scalar. swift-mustache's own looks each `Character` up whole, and
    /// a quote followed by a combining mark (U+0301, U+200D) is one `Character` that is not in its
    /// table: it went out raw, and notification text could add attributes to its element
    /// (`hidden`, an `id` the page's script looks up, a second `data-id`).
    struct ScalarHTML: MustacheContentType {
        static let name = "NotifBridgeHTML"

        func escapeText(_ text: String) -> String {
            var escaped = ""
            escaped.reserveCapacity(text.utf8.count)
            for scalar in text.unicodeScalars {
                switch scalar {
                case "&": escaped += "&amp;"
                case "<": escaped += "&lt;"
                case ">": escaped += "&gt;"
                case "\"": escaped += "&quot;"
                case "'": escaped += "&#39;"
                default: escaped.unicodeScalars.append(scalar)
                }
            }
            return escaped
        }
    }

    static func render(_ object: Any, _ name: String) -> String {
        guard let html = library.render(object, withTemplate: name) else { preconditionFailure("no dashboard template \(name)") }
        return html
    }

    private static let sources: [(String, String)] = [
        ("head", head), ("list", list), ("item", item), ("state", state), ("chart", chart), ("detail", detail), ("login", login), ("error", error),
    ]

    private static let head = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="same-origin">
        <title>{{pageTitle}} · NotifBridge</title><link rel="stylesheet" href="/static/dashboard.css"></head>
        """

    private static let list = """
        {{> head}}
        <body><header><h1>NotifBridge</h1><span id="live" class="live">connecting…</span><form class="signout" method="post" action="/logout"><button type="submit">Sign out</button></form></header>
        <main class="columns">
        <section class="notifications">
        <form class="filter" method="get" action="/">
        <select name="app" aria-label="App"><option value="">All apps</option>{{#apps}}<option value="{{source}}"{{#selected}} selected{{/selected}} dir="auto">{{name}} ({{count}})</option>{{/apps}}</select>
        <input type="search" name="q" value="{{text}}" placeholder="Search" maxlength="200" aria-label="Search">
        <button type="submit">Filter</button></form>
        <ul id="list" class="list" data-app="{{app}}" data-q="{{text}}" data-max="{{maxListed}}">{{#items}}{{> item}}{{/items}}</ul>
        {{^items}}<p class="empty" id="empty">No notifications{{#filtered}} match{{/filtered}} yet.</p>{{/items}}
        {{#truncated}}<p class="note">Showing the newest {{maxListed}}; narrow the search to see others.</p>{{/truncated}}
        {{#damaged}}<p class="note failed">{{damaged}} stored notification(s) cannot be read back (the store is damaged there) and are not shown.</p>{{/damaged}}
        </section>
        <aside>
        <section id="state">{{#state}}{{> state}}{{/state}}</section>
        <section class="chart" id="chart">{{#chart}}{{> chart}}{{/chart}}</section>
        <section class="policy"><h2>Policy</h2><details><summary>Effective policy</summary><pre>{{policy}}</pre></details></section>
        </aside></main>
        <script src="/static/dashboard.js"></script></body></html>
        """

    /// One notification; the server renders it for the first load and for each live change.
    private static let item = """
        <li class="item{{#alerted}} alerted{{/alerted}}" data-key="{{key}}" data-source="{{source}}" data-id="{{id}}" data-text="{{searchText}}">
        <div class="meta">{{#sourceIconURL}}<img class="icon" src="{{sourceIconURL}}" alt="" width="20" height="20">{{/sourceIconURL}}<span class="app" dir="auto">{{app}}</span>
        <time datetime="{{receivedISO}}">{{received}}</time></div>
        <a class="title" href="{{detailURL}}" dir="auto">{{#title}}{{.}}{{/title}}{{^title}}(no title){{/title}}</a>{{#subtitle}}<div class="subtitle" dir="auto">{{.}}</div>{{/subtitle}}
        {{#body}}<p class="body" dir="auto">{{.}}</p>{{/body}}
        {{#decision}}<div class="why">{{summary}} — <bdi>{{reason}}</bdi></div>{{/decision}}
        <div class="actions">{{#buttons}}<button type="button" data-op="action" data-action="{{id}}" dir="auto">{{title}}</button>{{/buttons}}
        {{#replies}}<span class="reply"><input type="text" maxlength="1024" placeholder="{{placeholder}}" data-reply-for="{{id}}" aria-label="{{title}}"><button type="button" data-op="reply" data-action="{{id}}" dir="auto">{{title}}</button></span>{{/replies}}
        {{#canDismiss}}<button type="button" data-op="dismiss">Dismiss</button>{{/canDismiss}}<button type="button" data-op="clear">Clear on iPhone</button></div>
        <output class="result" aria-live="polite"></output></li>
        """

    private static let state = """
        <h2>Link</h2>
        <p class="{{#connected}}ok{{/connected}}{{^connected}}idle{{/connected}}">{{#connected}}iPhone connected: {{#peers}}<span class="peer" dir="auto">{{.}}</span> {{/peers}}{{/connected}}{{^connected}}No iPhone connected{{/connected}}</p>
        <ul class="serving">{{#serving}}<li dir="auto">{{.}}</li>{{/serving}}</ul>
        <p>Key exchange: {{#exchange}}{{.}}{{/exchange}}{{^exchange}}none yet{{/exchange}}</p>
        {{#problem}}<p class="problem">Last problem: <bdi>{{.}}</bdi></p>{{/problem}}
        """

    private static let chart = """
        <h2>Last 24 hours</h2><p>{{total}} notifications, {{alerts}} alerted</p>
        <svg class="bars" viewBox="0 0 \(ChartView.width) \(ChartView.height)" width="\(ChartView.width)" height="\(ChartView.height)" role="img" aria-label="Notifications and alerts per hour">
        {{#bars}}<g><title>{{title}}</title><rect class="n" x="{{x}}" y="{{notificationsY}}" width="\(ChartView.barWidth)" height="{{notificationsHeight}}"></rect><rect class="a" x="{{x}}" y="{{alertsY}}" width="\(ChartView.barWidth)" height="{{alertsHeight}}"></rect></g>{{/bars}}
        </svg><p class="legend"><span class="n">■</span> notifications <span class="a">■</span> alerted</p>
        """

    private static let detail = """
        {{> head}}
        <body><header><h1><a href="/">NotifBridge</a></h1><span id="live" class="live">connecting…</span><form class="signout" method="post" action="/logout"><button type="submit">Sign out</button></form></header>
        <main class="detail">{{#notification}}
        <ul id="list" class="list single" data-detail="{{key}}">{{> item}}</ul>
        <dl>
        <dt>App</dt><dd><bdi>{{app}}</bdi> <code dir="auto">{{source}}</code></dd><dt>Identifier</dt><dd><code dir="auto">{{id}}</code></dd>
        <dt>Received</dt><dd>{{received}}</dd>
        {{#decision}}<dt>Alert</dt><dd>{{summary}}</dd><dt>Why</dt><dd dir="auto">{{reason}}</dd>{{/decision}}
        {{#iOSAlerting}}<dt>From iOS</dt><dd>{{.}}</dd>{{/iOSAlerting}}
        {{#removed}}<dt>State</dt><dd>removed</dd>{{/removed}}
        </dl>
        {{#contextIconURL}}<p><img class="context-icon" src="{{contextIconURL}}" alt="Context icon" width="64" height="64"></p>{{/contextIconURL}}
        {{#hasAttachments}}<h2>Attachments</h2><ul class="attachments">{{#attachments}}<li>{{#isImage}}<img src="{{url}}" alt="Attachment" class="attachment">{{/isImage}}<a href="{{url}}" download>{{type}}, {{size}}</a></li>{{/attachments}}</ul>{{/hasAttachments}}
        {{/notification}}</main>
        <script src="/static/dashboard.js"></script></body></html>
        """

    private static let error = """
        {{> head}}
        <body><header><h1><a href="/">NotifBridge</a></h1></header><main class="error">
        <h2>{{status}}</h2><p class="problem" dir="auto">{{message}}</p><p><a href="/">Back to the notifications</a></p>
        </main></body></html>
        """

    private static let login = """
        {{> head}}
        <body><header><h1>NotifBridge</h1></header><main class="login">
        <p>This dashboard needs its token: the file <code>{{tokenPath}}</code> on the accessory.</p>
        {{#failed}}<p class="problem">That token is not this dashboard's.</p>{{/failed}}
        <form method="post" action="/login"><input type="password" name="token" autocomplete="off" aria-label="Token" maxlength="128"><button type="submit">Open</button></form>
        </main></body></html>
        """
}
