/// The dashboard's stylesheet and script, served from the binary (no external assets). The
/// script inserts only markup the server rendered and escaped; notification text never passes
/// through it as HTML.
enum DashboardAssets {
    static let css = """
        :root { color-scheme: light dark; --accent: #0a7cff; --muted: #777; --alert: #e8590c; }
        body { font: 15px/1.4 system-ui, sans-serif; margin: 0; }
        header { display: flex; align-items: baseline; gap: 1em; padding: .6em 1em; border-bottom: 1px solid #8884; }
        header h1 { font-size: 1.2em; margin: 0; } header a { color: inherit; text-decoration: none; } header .signout { margin-left: auto; }
        .live { color: var(--muted); font-size: .85em; } .live.on { color: #2b8a3e; }
        main { padding: 1em; } .columns { display: grid; grid-template-columns: minmax(0, 2fr) minmax(16em, 1fr); gap: 1.5em; }
        @media (max-width: 800px) { .columns { grid-template-columns: 1fr; } }
        .filter { display: flex; gap: .5em; margin-bottom: 1em; } .filter input[type=search] { flex: 1; }
        .list { list-style: none; padding: 0; margin: 0; }
        .item { border: 1px solid #8884; border-left: 4px solid #8886; border-radius: 6px; padding: .6em .8em; margin-bottom: .6em; }
        .item.alerted { border-left-color: var(--alert); }
        .meta { display: flex; align-items: center; gap: .5em; color: var(--muted); font-size: .85em; }
        .meta time { margin-left: auto; } .icon { border-radius: 4px; }
        .title { font-weight: 600; color: inherit; } .subtitle { font-weight: 500; }
        .body { margin: .3em 0; white-space: pre-wrap; overflow-wrap: anywhere; }
        .why { color: var(--muted); font-size: .85em; }
        .actions { display: flex; flex-wrap: wrap; gap: .4em; margin-top: .4em; } .reply { display: inline-flex; gap: .2em; }
        button { font: inherit; padding: .15em .7em; border-radius: 5px; border: 1px solid #8888; background: #8881; cursor: pointer; }
        .result { font-size: .85em; color: var(--muted); } .result.failed, .problem { color: #c92a2a; }
        .ok { color: #2b8a3e; } .idle { color: var(--muted); }
        .bars .n { fill: #8888; } .bars .a { fill: var(--alert); } .legend .n { color: #8888; } .legend .a { color: var(--alert); }
        pre { white-space: pre-wrap; font-size: .8em; } .empty, .note { color: var(--muted); }
        dl { display: grid; grid-template-columns: max-content 1fr; gap: .2em 1em; } dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; }
        .attachment { display: block; max-width: 100%; max-height: 20em; margin: .3em 0; }
        """

    static let script = """
        "use strict";
        (() => {
          const list = document.getElementById("list");
          const live = document.getElementById("live");
          const app = list && list.dataset.app || "";
          // data-text is lower-cased by the server, as its own search is.
          const text = (list && list.dataset.q || "").toLowerCase();
          const detail = list && list.dataset.detail;
          const maxListed = Number(list && list.dataset.max) || 200;

          const fragment = (html) => {
            const template = document.createElement("template");
            template.innerHTML = html;
            return template.content.firstElementChild;
          };
          const find = (key) => [...list.children].find((element) => element.dataset.key === key);
          const wanted = (element) => (!app || element.dataset.source === app) && (!text || element.dataset.text.includes(text));

          // The chart is counted from the store: fetched again a moment after notifications
          // change, at most once per two seconds whatever arrives.
          let chartTimer = null;
          function refreshChart() {
            const chart = document.getElementById("chart");
            if (!chart || chartTimer) return;
            chartTimer = setTimeout(async () => {
              chartTimer = null;
              try {
                const response = await fetch("/chart", { credentials: "same-origin" });
                if (response.ok) chart.innerHTML = await response.text();
              } catch (error) {}
            }, 2000);
          }

          function apply(update) {
            if (update.kind === "state") {
              const state = document.getElementById("state");
              if (state) state.innerHTML = update.html;
            } else if (update.kind === "removedAll") {
              if (detail) location.reload(); else if (list) list.replaceChildren();
            } else if (update.kind === "notification" && list) {
              if (update.change === "added") refreshChart();
              if (detail && update.key !== detail) return;
              const old = find(update.key);
              if (update.change === "removed" && !detail) { if (old) old.remove(); return; }
              const element = fragment(update.html);
              if (!detail && !wanted(element)) { if (old) old.remove(); return; }
              if (old) old.replaceWith(element); else list.prepend(element);
              // A page left open for days keeps as many as it first showed.
              while (!detail && list.children.length > maxListed) list.lastElementChild.remove();
              const empty = document.getElementById("empty");
              if (empty) empty.remove();
            }
          }

          function connect() {
            const socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/live");
            socket.onopen = () => { live.textContent = "live"; live.classList.add("on"); };
            socket.onmessage = (message) => apply(JSON.parse(message.data));
            socket.onclose = async (event) => {
              live.textContent = "offline"; live.classList.remove("on");
              // 4000: this page fell behind and missed updates; anything else: try again soon.
              if (event.code === 4000) { location.reload(); return; }
              // A refused upgrade gives no reason, and 4001 says the session ended: ask.
              try {
                const probe = await fetch("/chart", { credentials: "same-origin" });
                if (probe.status === 401) { location.assign("/login"); return; }
              } catch (error) {}
              setTimeout(connect, 2000);
            };
          }

          document.addEventListener("click", async (event) => {
            const button = event.target.closest("button[data-op]");
            if (!button) return;
            const item = button.closest("[data-key]");
            const output = item.querySelector(".result");
            const request = { op: button.dataset.op, source: item.dataset.source, id: item.dataset.id };
            if (button.dataset.action) request.action = button.dataset.action;
            if (request.op === "reply") {
              const input = [...item.querySelectorAll("input[data-reply-for]")].find((field) => field.dataset.replyFor === request.action);
              request.text = input ? input.value : "";
            }
            button.disabled = true;
            try {
              const response = await fetch("/respond", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(request), credentials: "same-origin" });
              // The accessory's answer is {ok, message}; a refusal before it (no token, another
              // site's page) is {error: {message}}, and a few come without a body.
              let reply = {};
              try { reply = await response.json(); } catch (error) {}
              const message = reply.message || (reply.error && reply.error.message);
              output.textContent = message || (response.ok ? "sent" : "refused: " + response.status + " " + response.statusText);
              output.classList.toggle("failed", !response.ok || reply.ok === false);
            } catch (error) {
              output.textContent = "the accessory did not answer";
              output.classList.add("failed");
            } finally {
              button.disabled = false;
            }
          });

          if (live) connect();
        })();
        """
}
