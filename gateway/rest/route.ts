/** A set of routes: answers the request, or returns null when the path is not one of its own. */
export type RouteSet = (segments: readonly string[], query: string) => Buffer | null;
