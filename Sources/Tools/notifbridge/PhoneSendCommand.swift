import ArgumentParser
import Foundation
import NotifBridgeAccessory
import NotifBridgeFiles
import NotifBridgeHost
import NotifBridgeHostCore

extension PhoneCommand {
    /// Forwards APNs payloads, as iOS would after receiving them for an app.
    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "send",
            abstract: "Forward APNs JSON payloads as the notifications iOS would show.",
            discussion: """
                Maps aps.alert (string, dictionary or loc-key forms), thread-id, category (through \
                --categories), interruption-level and sound (including the critical dictionary) to the \
                notification and its alerting context, then forwards each file as an add. A payload with \
                mutable-content goes through --service-extension first, if given: /bin/sh -c COMMAND gets \
                the payload on stdin and may print {"title", "subtitle", "body", "attachments"} (keys left \
                out are kept, "" removes) on stdout. A non-zero exit, invalid output or a missed deadline \
                forwards the original content, as iOS does.
                """
        )

        @OptionGroup var target: PhoneTarget
        @Argument(help: "APNs payload files (JSON, at most 4096 bytes each).") var files: [String]
        @Option(help: "Bundle identifier of the sending app.") var source: String = "com.example.app"
        @Option(help: "Display name of the sending app.") var sourceName: String = "Example"
        @Option(help: "Notification identifier (one file only; otherwise each gets a new UUID).") var id: String?
        @Option(help: "JSON file: {category: [actions]} as the app registers its UNNotificationCategory set.") var categories: String?
        @Option(help: "JSON file: the app's localized strings, for loc-key payloads.") var strings: String?
        @Flag(help: "A Focus is on: only time-sensitive and critical notifications alert.") var focus = false
        @Option(help: "Shell command (run with /bin/sh -c) playing the app's notification service extension for mutable-content payloads.")
        var serviceExtension: String?
        @Option(help: "Seconds the service extension may take before the original content is forwarded (iOS gives about 30).")
        var serviceExtensionDeadline: Double = Double(ServiceExtension.defaultDeadline.components.seconds)
        @Option(parsing: .unconditional, help: "Seconds to stay connected after the last receipt, printing replies (at most an hour).") var linger: Double = 0

        func validate() throws {
            if id != nil, files.count > 1 { throw ValidationError("--id names one notification; give one file with it") }
            if let id, id.isEmpty { throw ValidationError("--id must not be empty (leave it out for a new one)") }
            if source.isEmpty { throw ValidationError("--source must name the app (a bundle identifier such as com.example.app)") }
            try Forward.check(linger: linger)
            guard serviceExtensionDeadline > 0, serviceExtensionDeadline <= Self.maxDeadlineSeconds else {
                throw ValidationError("--service-extension-deadline must be more than 0 and at most \(Int(Self.maxDeadlineSeconds)) seconds")
            }
        }

        /// Payloads, categories and strings are read to at most this; a payload over APNs' 4 KiB
        /// is then refused with the others' reasons.
        static let maxFileLength = 1 << 20

        /// Far beyond iOS's 30 s; only keeps a typo from hanging the command for days.
        static let maxDeadlineSeconds: Double = 600

        func run() async throws {
            // A category's actions are under its own name: their `type` is named by itself.
            let actionKinds = ["type": [HostNotification.ActionInput.Kind.dismiss, .background, .textInput].map(\.rawValue)]
            let categoryTable = try categories.map {
                try OperationFile.read([String: [HostNotification.ActionInput]].self, path: $0, option: "--categories", limit: Self.maxFileLength, words: actionKinds)
            } ?? [:]
            let stringTable = try strings.map { try OperationFile.read([String: String].self, path: $0, option: "--strings", limit: Self.maxFileLength) } ?? [:]
            let printer = PhonePrinter()
            let runner = serviceExtension.map { ServiceExtensionRunner(command: $0, deadline: .seconds(serviceExtensionDeadline)) }
            var operations: [HostOperation] = []
            var notForwarded = 0
            for file in files {
                let data: Data
                do { data = try fileContents(file, limit: Self.maxFileLength) } catch {
                    throw CommandFailure("cannot read \(file): \(error)")
                }
                let context = APNsPayload.Context(source: source, sourceName: sourceName, id: id ?? UUID().uuidString, categories: categoryTable, strings: stringTable, focus: focus)
                var mapped: APNsPayload.Mapped
                do { mapped = try APNsPayload.map(data, context: context) } catch {
                    // One payload iOS would not forward (a background push, an unknown category)
                    // does not stop the others; the exit status says one was left out.
                    let hint = categories == nil && "\(error)".contains("categor") ? " (no --categories file was given)" : ""
                    printer.line("\(file): not forwarded: \(error)\(hint)")
                    notForwarded += 1
                    continue
                }
                if let runner {
                    let outcome: ServiceExtension.Outcome
                    (mapped, outcome) = await runner.process(mapped, payload: data)
                    printer.line("\(file): \(outcome)")
                } else if mapped.mutableContent {
                    printer.line("\(file): mutable-content is set but no --service-extension was given; forwarding the original content, as iOS does when the extension does not answer")
                }
                operations.append(mapped.operation)
            }
            guard !operations.isEmpty else { throw CommandFailure("no payload could be forwarded") }
            let mappedOperations = operations
            let summary = try await target.connect(onEvent: printer.print) { connection in
                try await forward(mappedOperations, over: connection, printer: printer, linger: linger)
            }.0
            printer.line(summary.description + (notForwarded > 0 ? "; \(notForwarded) payload(s) not forwarded" : ""))
            if !summary.isComplete || notForwarded > 0 { throw ExitCode(1) }
        }
    }
}
