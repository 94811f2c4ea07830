/// `GET /`: a one-file chat page (no external assets) that streams answers from
/// `/v1/chat/completions`. A base model (no chat template) is sent the text as a plain
/// prompt to `/v1/completions` instead. When the server has an API key, the page asks for it
/// (kept in the tab's sessionStorage only) and loads the models again once it is given; Stop
/// ends the answer being streamed (what came stays), New chat forgets the conversation.
enum ChatPage {
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>phikit chat</title>
        <style>
          body { font: 15px/1.45 system-ui, sans-serif; margin: 0; background: #f6f6f4; color: #222; }
          header { padding: 10px 16px; background: #24303c; color: #fff; display: flex; gap: 12px;
                   align-items: center; }
          header b { font-weight: 600; }
          header input { margin-left: auto; width: 12em; }
          header input.needed { outline: 3px solid #f0b43c; }
          #keynote { color: #f0b43c; }
          #log { max-width: 52em; margin: 0 auto; padding: 16px 16px 120px; }
          .msg { white-space: pre-wrap; padding: 8px 12px; margin: 8px 0; border-radius: 8px; }
          .user { background: #dbe8f5; margin-left: 18%; }
          .assistant { background: #fff; border: 1px solid #ddd; margin-right: 18%; }
          .error { background: #fbe3e3; color: #7a1c1c; }
          .meta { color: #777; font-size: 12px; }
          form { position: fixed; bottom: 0; left: 0; right: 0; display: flex; gap: 8px;
                 padding: 12px 16px; background: #eceae6; border-top: 1px solid #ccc; }
          textarea { flex: 1; font: inherit; height: 3.2em; resize: none; padding: 6px; }
          button { font: inherit; padding: 0 18px; }
        </style>
        </head>
        <body>
        <header><b>phikit</b><span id="model">…</span><span id="keynote"></span>
          <input id="key" type="password" placeholder="API key (optional)" autocomplete="off">
          <button id="newchat" type="button">New chat</button>
        </header>
        <div id="log"></div>
        <form id="form">
          <textarea id="input" placeholder="Message (Enter sends, Shift+Enter for a new line)"></textarea>
          <button id="send" type="submit">Send</button>
          <button id="stop" type="button" disabled>Stop</button>
        </form>
        <script>
        const log = document.getElementById('log');
        const input = document.getElementById('input');
        const key = document.getElementById('key');
        const sendButton = document.getElementById('send');
        const stopButton = document.getElementById('stop');
        const keynote = document.getElementById('keynote');
        const history = [];
        let model = null;
        let answering = null;  // the AbortController of the answer being streamed
        let conversation = 0;  // New chat starts another: a stopped answer stays out of it
        // The key stays in this tab's session (sessionStorage): never on disk.
        key.value = sessionStorage.getItem('phikit-key') || '';
        key.onchange = () => { sessionStorage.setItem('phikit-key', key.value); loadModel(); };
        stopButton.onclick = () => { if (answering) answering.abort(); };
        document.getElementById('newchat').onclick = () => {
          if (answering) answering.abort();
          conversation++;
          history.length = 0;
          log.textContent = '';
          input.focus();
        };
        // 401: say the server needs a key and point at the field.
        function askForKey(message) {
          keynote.textContent = message;
          key.classList.add('needed');
          key.focus();
        }

        function headers() {
          const h = { 'Content-Type': 'application/json' };
          if (key.value) h['Authorization'] = 'Bearer ' + key.value;
          return h;
        }
        function bubble(role, text) {
          const div = document.createElement('div');
          div.className = 'msg ' + role;
          div.textContent = text;
          log.appendChild(div);
          window.scrollTo(0, document.body.scrollHeight);
          return div;
        }
        async function loadModel() {
          try {
            const r = await fetch('/v1/models', { headers: headers() });
            if (r.status === 401) {
              model = null;
              document.getElementById('model').textContent = '';
              askForKey(key.value ? 'that API key is not this server\'s: enter the right one'
                                  : 'this server needs an API key: enter it here');
              return;
            }
            const j = await r.json();
            model = j.data[0].id;
            document.getElementById('model').textContent = model;
            keynote.textContent = '';
            key.classList.remove('needed');
          } catch (e) { document.getElementById('model').textContent = '(models: ' + e + ')'; }
        }
        // Reads server-sent events; calls onData with each parsed `data:` object.
        async function readEvents(response, onData) {
          const reader = response.body.getReader();
          const decoder = new TextDecoder();
          let buffer = '';
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buffer += decoder.decode(value, { stream: true });
            let end;
            while ((end = buffer.indexOf('\n\n')) >= 0) {
              const block = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              for (const line of block.split('\n')) {
                if (!line.startsWith('data: ')) continue;
                const data = line.slice(6);
                if (data === '[DONE]') return;
                onData(JSON.parse(data));
              }
            }
          }
        }
        async function ask(text) {
          const started_in = conversation;
          history.push({ role: 'user', content: text });
          bubble('user', text);
          const out = bubble('assistant', '');
          const meta = document.createElement('div');
          meta.className = 'meta';
          let answer = '';
          let usage = null;
          const started = performance.now();
          const body = { model, messages: history, stream: true,
                         stream_options: { include_usage: true } };
          answering = new AbortController();
          const signal = answering.signal;
          let r = await fetch('/v1/chat/completions', { method: 'POST', headers: headers(),
                                                        body: JSON.stringify(body), signal });
          if (r.status === 401) {
            history.pop();
            askForKey('this server needs an API key: enter it here');
            throw new Error('the server needs an API key');
          }
          let chat = true;
          if (r.status === 400) {
            const err = await r.json();
            if (err.error && err.error.code === 'no_chat_template') {
              chat = false;
              r = await fetch('/v1/completions', { method: 'POST', headers: headers(), signal,
                body: JSON.stringify({ model, prompt: text, max_tokens: 256, stream: true,
                                       stream_options: { include_usage: true } }) });
            } else { throw new Error(err.error ? err.error.message : r.statusText); }
          }
          if (!r.ok) {
            const err = await r.json().catch(() => ({}));
            throw new Error(err.error ? err.error.message : r.status + ' ' + r.statusText);
          }
          let stopped = false;
          try {
          await readEvents(r, (chunk) => {
            if (chunk.error) throw new Error(chunk.error.message);
            if (chunk.usage) usage = chunk.usage;
            const choice = chunk.choices && chunk.choices[0];
            if (!choice) return;
            const piece = chat ? (choice.delta && choice.delta.content) : choice.text;
            if (piece) { answer += piece; out.textContent = answer; }
            if (chat && choice.delta && choice.delta.tool_calls) {
              out.textContent = answer + '\n' + JSON.stringify(choice.delta.tool_calls, null, 1);
            }
            window.scrollTo(0, document.body.scrollHeight);
          });
          } catch (e) {
            // Stop: the answer so far stays (closing the stream frees the server's slot).
            if (e.name !== 'AbortError') throw e;
            stopped = true;
          }
          if (started_in !== conversation) return;
          if (chat) history.push({ role: 'assistant', content: answer });
          const seconds = (performance.now() - started) / 1000;
          meta.textContent = stopped ? `stopped after ${seconds.toFixed(1)} s` : usage
            ? `${usage.completion_tokens} tokens in ${seconds.toFixed(1)} s` +
              ` (prompt ${usage.prompt_tokens}, cached ${usage.prompt_tokens_details.cached_tokens})`
            : `${seconds.toFixed(1)} s`;
          out.appendChild(meta);
        }
        document.getElementById('form').onsubmit = async (event) => {
          event.preventDefault();
          const text = input.value.trim();
          if (!text) return;
          input.value = '';
          sendButton.disabled = true;
          stopButton.disabled = false;
          try { await ask(text); } catch (e) {
            if (e.name !== 'AbortError') bubble('error', String(e.message || e));
          }
          answering = null;
          sendButton.disabled = false;
          stopButton.disabled = true;
          input.focus();
        };
        input.addEventListener('keydown', (e) => {
          if (e.key === 'Enter' && !e.shiftKey) {
            e.preventDefault();
            document.getElementById('form').requestSubmit();
          }
        });
        loadModel();
        </script>
        </body>
        </html>
        """#
}
