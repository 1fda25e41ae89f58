import Foundation
import NotifBridgeHostCore
import NotifBridgeScenario

/// Scenario YAML, a file a person writes: parsed, then every call the player would make from it.
enum ScenarioTarget {
    static let now = Date(timeIntervalSince1970: 1_778_490_000)

    /// Parses a scenario, then builds every call the player would make from it, one at a time.
    static func run(_ bytes: [UInt8]) {
        guard let scenario = try? ScenarioFile.parse(String(decoding: bytes, as: UTF8.self)) else { return }
        precondition(scenario.steps.count <= ScenarioFile.maxSteps, "\(scenario.steps.count) steps")
        var focus = false
        for step in scenario.steps {
            switch step {
            case .operation(let spec): build(spec, focus: focus)
            case .disconnect(let spec): spec.map { build($0, focus: focus) }
            case .reorder(let specs): specs.forEach { build($0, focus: focus) }
            case .focus(let on): focus = on
            case .wait(let seconds): precondition((0...ScenarioFile.maxWait).contains(seconds), "wait \(seconds)")
            case .reconnect, .restartAccessory, .settle: break
            }
        }
        let expected = scenario.expect.present.map(\.ref) + scenario.expect.absent + scenario.expect.alerted + scenario.expect.notAlerted
        precondition(expected.allSatisfy { !$0.id.isEmpty }, "an expectation names an empty id")
    }

    private static func build(_ spec: OperationSpec, focus: Bool) {
        if case .add(let notification) = spec, let bytes = notification.attachmentBytes {
            precondition((1...ScenarioFile.maxAttachmentBytes).contains(bytes), "attachment of \(bytes) bytes")
        }
        do {
            _ = try DataProvider.event(for: spec.operation(focus: focus), now: now)
        } catch {
            preconditionFailure("a parsed scenario call does not serialise: \(error)")
        }
    }
}
