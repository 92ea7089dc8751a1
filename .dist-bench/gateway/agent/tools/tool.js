/** Keeps the argument type of `run` tied to the input schema. */
export function defineTool(spec) {
    return spec;
}
/** A call the caller can correct: the message says what to do instead. */
export class ToolFailure extends Error {
    name = 'ToolFailure';
}
//# sourceMappingURL=tool.js.map