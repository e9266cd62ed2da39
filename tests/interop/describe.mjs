// What pi sees in a session file: for every entry taken as the leaf, pi's buildSessionContext;
// the entry count, the leaf and the name of the file as pi opens it.

export function describeSession(pi, scenario, file, openedFrom, version, sessionDir) {
    const sm = pi.SessionManager.open(openedFrom, sessionDir);
    const entries = sm.getEntries();
    const leafId = sm.getLeafId();
    const contexts = entries.map((entry, index) => ({
        index,
        id: entry.id,
        context: pi.buildSessionContext(entries, entry.id),
    }));
    return {
        scenario,
        file,
        version,
        idsStable: version !== 1,
        entryCount: entries.length,
        leafId,
        leafIndex: entries.findIndex((e) => e.id === leafId),
        name: sm.getSessionName() ?? null,
        labels: Object.fromEntries(entries.map((e) => [e.id, sm.getLabel(e.id) ?? null]).filter(([, l]) => l !== null)),
        contexts,
    };
}
