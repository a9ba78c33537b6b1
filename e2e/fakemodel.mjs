// A local stand-in for a model API, so the real agents (Claude Code, Codex,
// Gemini CLI) can be driven without the internet: it speaks just enough of the
// Anthropic Messages API, the OpenAI Responses API and the Gemini API, streaming
// or not as the request asks. Its one move: when a request offers the tool the
// test wants called, it answers with the first of the test's calls of that tool;
// when the request carries the result of call i, it records that result exactly
// as the model would read it and answers with call i+1, or ends the turn after
// the last. Every other request (titles, quota checks, routing and next-speaker
// checks) gets a short text answer.
import { createServer } from 'node:http';

// startModel starts the stand-in on a free loopback port. wantTool(name) picks the
// tool to call among those the request offers; calls are the successive calls'
// arguments. It resolves to { url, results, requests, offered, close }: results[i]
// is call i's result, { api, name, text } with text what the model reads.
export async function startModel({ wantTool, calls }) {
  const results = [];
  const requests = [];
  // offered: the tool's description as the model is shown it, from the first
  // request that offers it.
  const offered = {};
  const issued = new Set();
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      let json = {};
      try {
        json = body ? JSON.parse(body) : {};
      } catch {}
      requests.push({ method: req.method, url: req.url, body: json });
      try {
        route(req, res, json);
      } catch (err) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(err) } }));
      }
    });
  });

  function route(req, res, body) {
    const url = req.url;
    if (/\/messages\/count_tokens/.test(url)) return sendJSON(res, { input_tokens: 10 });
    if (/\/v1\/messages/.test(url)) return anthropic(res, body);
    if (/\/responses/.test(url)) return openai(res, body);
    if (/:countTokens/.test(url)) return sendJSON(res, { totalTokens: 10 });
    if (/:(stream)?[gG]enerateContent/.test(url)) return gemini(req, res, body);
    if (/\/models/.test(url) && req.method === 'GET') return sendJSON(res, { data: [], models: [] });
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `no such endpoint in the stand-in: ${req.method} ${url}` } }));
  }

  // offer returns the name of the wanted tool among tools ({name, description}).
  function offer(tools) {
    const tool = tools.find((t) => wantTool(t.name));
    if (!tool) return undefined;
    if (offered.name === undefined) Object.assign(offered, { name: tool.name, description: tool.description || '', tools: tools.map((t) => t.name) });
    return tool.name;
  }

  // callIndex returns i for an id prefix+i, else -1.
  function callIndex(id, prefix) {
    const m = typeof id === 'string' && id.startsWith(prefix) ? /^\d+$/.exec(id.slice(prefix.length)) : null;
    return m ? Number(m[0]) : -1;
  }

  function record(i, result) {
    if (results[i] === undefined) results[i] = result;
  }

  // nextCall returns the index of the call to make next, or -1 to end the turn:
  // the call after those answered in this request, if the tool is offered and
  // that call was not made already (a side request must not repeat one).
  function nextCall(name, seen) {
    const next = seen.length ? Math.max(...seen) + 1 : 0;
    if (!name || next >= calls.length || issued.has(next)) return -1;
    issued.add(next);
    return next;
  }

  // Anthropic Messages API (Claude Code).
  function anthropic(res, body) {
    const name = offer((body.tools || []).filter((t) => t.name));
    const messages = body.messages || [];
    const seen = [];
    for (const m of messages) {
      for (const b of Array.isArray(m.content) ? m.content : []) {
        const i = b.type === 'tool_result' ? callIndex(b.tool_use_id, 'toolu_shellgate_') : -1;
        if (i < 0) continue;
        const text = typeof b.content === 'string' ? b.content : (b.content || []).map((c) => c.text ?? JSON.stringify(c)).join('');
        seen.push(i);
        record(i, { api: 'anthropic', name, text, isError: !!b.is_error });
      }
    }
    const next = nextCall(name, seen);
    const content = next < 0 ? [{ type: 'text', text: 'done' }] : [{ type: 'tool_use', id: `toolu_shellgate_${next}`, name, input: calls[next] }];
    const stop = next < 0 ? 'end_turn' : 'tool_use';
    const message = { id: 'msg_stand_in', type: 'message', role: 'assistant', model: body.model || 'stand-in', stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } };
    if (!body.stream) return sendJSON(res, { ...message, content, stop_reason: stop });
    const events = [['message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null } }]];
    content.forEach((c, index) => {
      if (c.type === 'text') {
        events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
        events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: c.text } }]);
      } else {
        events.push(['content_block_start', { type: 'content_block_start', index, content_block: { ...c, input: {} } }]);
        events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(c.input) } }]);
      }
      events.push(['content_block_stop', { type: 'content_block_stop', index }]);
    });
    events.push(['message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } }]);
    events.push(['message_stop', { type: 'message_stop' }]);
    sendSSE(res, events);
  }

  // OpenAI Responses API (Codex).
  function openai(res, body) {
    // Codex groups an MCP server's tools in a namespace, and a call names both.
    const tools = (body.tools || []).flatMap((t) => (t.type === 'namespace' ? (t.tools || []).map((s) => ({ ...s, namespace: t.name })) : [t]));
    const name = offer(tools.filter((t) => t.name));
    const namespace = tools.find((t) => t.name === name)?.namespace;
    const input = Array.isArray(body.input) ? body.input : [];
    const seen = [];
    for (const r of input) {
      const i = r.type === 'function_call_output' ? callIndex(r.call_id, 'call_shellgate_') : -1;
      if (i < 0) continue;
      // Codex sends a list of text parts; the model reads them one after another.
      const text = typeof r.output === 'string' ? r.output : Array.isArray(r.output) ? r.output.map((c) => c.text ?? JSON.stringify(c)).join('') : JSON.stringify(r.output);
      seen.push(i);
      record(i, { api: 'openai', name, text, parts: Array.isArray(r.output) ? r.output.length : 1 });
    }
    const next = nextCall(name, seen);
    const item = next < 0
      ? { type: 'message', role: 'assistant', id: 'msg_stand_in', status: 'completed', content: [{ type: 'output_text', text: 'done', annotations: [] }] }
      : { type: 'function_call', id: `fc_stand_in_${next}`, call_id: `call_shellgate_${next}`, name, ...(namespace && { namespace }), arguments: JSON.stringify(calls[next]), status: 'completed' };
    const response = { id: 'resp_stand_in', object: 'response', status: 'completed', model: body.model || 'stand-in', output: [item], usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 } };
    if (!body.stream) return sendJSON(res, response);
    sendSSE(res, [
      ['response.created', { type: 'response.created', response: { ...response, status: 'in_progress', output: [] } }],
      ['response.output_item.added', { type: 'response.output_item.added', output_index: 0, item }],
      ['response.output_item.done', { type: 'response.output_item.done', output_index: 0, item }],
      ['response.completed', { type: 'response.completed', response }],
    ]);
  }

  // Gemini API (Gemini CLI).
  function gemini(req, res, body) {
    const name = offer((body.tools || []).flatMap((t) => t.functionDeclarations || []));
    const contents = body.contents || [];
    const seen = [];
    for (const c of contents) {
      for (const p of c.parts || []) {
        if (!p.functionResponse || p.functionResponse.name !== name) continue;
        // By id where the client sends it back, else by order.
        const id = callIndex(p.functionResponse.id, 'shellgate_');
        const i = id >= 0 ? id : seen.length;
        // The model reads the response object as JSON.
        seen.push(i);
        record(i, { api: 'gemini', name, text: JSON.stringify(p.functionResponse.response), response: p.functionResponse.response });
      }
    }
    const next = nextCall(name, seen);
    let part;
    if (next >= 0) {
      part = { functionCall: { id: `shellgate_${next}`, name, args: calls[next] } };
    } else if (body.generationConfig && body.generationConfig.responseMimeType === 'application/json') {
      // Gemini CLI's own checks (model routing, next speaker) want JSON.
      part = { text: JSON.stringify({ reasoning: 'simple', complexity_reasoning: 'simple', complexity_score: 1, model_choice: 'flash', next_speaker: 'user' }) };
    } else {
      part = { text: 'done' };
    }
    const answer = { candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }, modelVersion: 'stand-in' };
    if (!/streamGenerateContent/.test(req.url)) return sendJSON(res, answer);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.end(`data: ${JSON.stringify(answer)}\r\n\r\n`);
  }

  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    results,
    requests,
    offered,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(resolve);
    }),
  };
}

function sendJSON(res, obj) {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(obj));
}

function sendSSE(res, events) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.end(events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join(''));
}
