/** Query-layer parameter names to the tool argument names that set them. */
const ARGUMENT_OF_PARAM = {
    order_by: 'sort_by',
    sort: 'sort_dir',
    dex_name: 'dex',
};
const HOW_TO_SEND_A_KEY = 'Put the key of a paid account (dev, pro or enterprise) in the Authorization header of the MCP connection (the whole header value is the key).';
function detailsOf(err) {
    try {
        return JSON.parse(err.body.toString('utf8'));
    }
    catch {
        return {};
    }
}
/** The tool-error text for a refusal of the query layer during a call of `tool`. */
export function describeApiError(err, tool) {
    const d = detailsOf(err);
    switch (err.code) {
        case 'invalid_parameter': {
            const param = d.param ?? 'query';
            const argument = ARGUMENT_OF_PARAM[param] ?? param;
            // "invalid query param: <param> <problem>" -> "<problem>"
            const problem = err.message.replace(/^invalid query param:\s*/, '').replace(new RegExp(`^${param}\\s+`), '');
            const accepted = d.accepted !== undefined && d.accepted.length > 0 ? ` Accepted values: ${d.accepted.join(', ')}.` : '';
            return `Invalid argument ${argument}: ${problem}.${accepted} Correct it and call ${tool} again.`;
        }
        case 'api_key_required':
            return `${tool} needs a paid plan, and this connection sends no key. ${HOW_TO_SEND_A_KEY} Retrying without a key will fail the same way.`;
        case 'plan_required': {
            const tier = d.tier ?? 'current';
            const required = d.required_tier ?? 'dev';
            if (d.param === undefined) {
                return `${tool} needs a paid plan (${required} or higher); this connection is on the ${tier} plan. ${HOW_TO_SEND_A_KEY} Retrying on the ${tier} plan will fail the same way.`;
            }
            const argument = ARGUMENT_OF_PARAM[d.param] ?? d.param;
            const fix = d.param === 'interval'
                ? 'Call again with a coarser interval, or use a key of that plan.'
                : 'Call again with a later start (the plan window counts back from now), or use a key of that plan.';
            return `Argument ${argument} is beyond the ${tier} plan: ${err.message}. It needs the ${required} plan or higher. ${fix}`;
        }
        case 'credits_exhausted':
            return `The credit allowance of this connection's plan (${d.plan ?? 'current'}) is used up until ${d.resets_at ?? 'the period ends'}; retrying before then will not help. Add credits to the account or use a key of a larger plan.`;
        case 'rate_limited': {
            const seconds = d.retry_after ?? 60;
            return `Per-minute rate limit of this connection's plan reached (${err.message}). Wait ${seconds} s, then retry the same call.`;
        }
        case 'not_found':
            return `Not found: ${err.message}. Check the network (getNetworks lists the ids) and the address (search finds tokens and pools by name or symbol).`;
        case 'invalid_api_key':
            return `The API key of this connection is not valid (revoked, regenerated or mistyped). ${HOW_TO_SEND_A_KEY} Or remove the header to use the keyless plan.`;
        case 'wrong_host':
        case 'preview_only':
        case 'forbidden_host':
        // The HTTP front's answers (gateway/edge): never the outcome of a tool call.
        case 'bad_request':
        case 'request_timeout':
        case 'header_fields_too_large':
        case 'not_implemented':
        case 'unavailable':
        case 'http_version_not_supported':
            return err.message;
        case 'endpoint_removed':
            return `${err.message}.`;
        case 'internal_error':
            return `The service failed to answer ${tool} (internal error). Retry with exponential backoff, starting at 1 s.`;
    }
}
/** Text for a failure that is not the caller's to fix. */
export function internalFailure(tool) {
    return `The service failed to answer ${tool} (internal error). Retry with exponential backoff, starting at 1 s.`;
}
//# sourceMappingURL=errors.js.map