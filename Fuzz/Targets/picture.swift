// Fuzz target: the Coffee app's picture sniffer (recognising PNG, JPEG, GIF
// and WebP by their first bytes) and the way a picture gets into the
// database and back: from memory, from a file and from a pipe, against a
// size limit, streamed into the row and written back out.
//
// Input: one byte choosing the size limit (its value times 16 bytes; 255
// for the app's default), then the picture's bytes.
//
// Invariants: nothing traps; the sniffer answers what the formats'
// signatures say, for any collection of the bytes; memory, file and pipe
// sources agree on the format, the size and the error; the bytes replayed
// to the database are the source's bytes; a stored picture reads back byte
// for byte with its format and size; a refused picture leaves the coffee's
// old picture as it was.

import Foundation

@testable import RecordsApp
@testable import SQLiteStore

/// What the formats' specifications say, written out independently of the
/// sniffer: PNG's 8-byte signature, JPEG's SOI marker and the first byte of
/// the next marker, GIF's two versions, and WebP's RIFF container.
private func referenceFormat(_ bytes: [UInt8]) -> PictureFormat? {
    func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
        bytes.count >= offset + prefix.count && Array(bytes[offset..<offset + prefix.count]) == prefix
    }
    if starts([137, 80, 78, 71, 13, 10, 26, 10]) { return .png }
    if starts([255, 216, 255]) { return .jpeg }
    if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
    if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
    return nil
}

/// A small valid PNG signature and header: the coffee's picture before each
/// input tries to replace it.
private let oldPicture: [UInt8] = [137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13] + Array("IHDR".utf8)

private let setUp: (store: AppDatabase, coffeeID: Int64) = {
    do {
        let database = try AppDatabase.inMemory()
        let draft = try CoffeeDraft.parse(name: "Fuzz", price: "1")
        let coffee = try blocking { try await CoffeeStore(database: database).add(draft) }
        return (database, coffee.id)
    } catch {
        fatalError("cannot set up the Coffee database: \(error)")
    }
}()

/// What opening a source gave, comparable across kinds of source.
private enum Opened: Equatable {
    case input(PictureFormat, size: Int?)
    case failure(PictureError.Reason)
}

private func open(_ source: PictureSource, limit: Int) -> (Opened, PictureInput?) {
    do {
        let input = try PictureInput.open(source, limit: limit)
        return (.input(input.format, size: input.size), input)
    } catch let error as PictureError {
        _ = error.description
        return (.failure(error.reason), nil)
    } catch {
        require(false, "opening a picture threw \(type(of: error)): \(error)")
        return (.failure(.empty), nil)
    }
}

/// A pipe holding `bytes`, its writing end closed; the bytes fit in the
/// pipe's buffer (the input is at most a few KiB).
private func pipe(holding bytes: [UInt8]) -> FileHandle {
    let pipe = Pipe()
    if !bytes.isEmpty { pipe.fileHandleForWriting.write(Data(bytes)) }
    try? pipe.fileHandleForWriting.close()
    return pipe.fileHandleForReading
}

/// Reads everything a blob source delivers, in odd-sized pieces.
private func drain(_ source: BlobSource) -> [UInt8] {
    guard case .custom(_, let read) = source.kind else {
        if case .data(let data) = source.kind { return Array(data) }
        require(false, "an unexpected kind of blob source: \(source.kind)")
        return []
    }
    var result: [UInt8] = []
    var piece = 1
    var buffer = [UInt8](repeating: 0, count: 16)
    while true {
        let count = buffer.withUnsafeMutableBytes { raw in
            (try? read(UnsafeMutableRawBufferPointer(rebasing: raw[0..<piece]))) ?? -1
        }
        require(count >= 0 && count <= piece, "a blob source read \(count) bytes into \(piece)")
        if count == 0 { break }
        result += buffer[0..<count]
        piece = piece % 16 + 1
    }
    return result
}

private func storedBytes(_ store: CoffeeStore, _ id: Int64, _ file: URL) -> [UInt8]? {
    try? FileManager.default.removeItem(at: file)
    do {
        let picture = try blocking { try await store.writePicture(id: id, to: .file(file)) }
        let bytes = try [UInt8](Data(contentsOf: file))
        require(picture.size == bytes.count, "writePicture reported \(picture.size) bytes, wrote \(bytes.count)")
        require(
            (try? blocking { try await store.coffee(id: id) })??.picture == picture,
            "the coffee's picture details differ from what was written")
        return bytes
    } catch {
        return nil
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var reader = FuzzReader(data, count: size)
    let limitCode = reader.byte()
    let limit = limitCode == 255 ? CoffeeRules.defaultPictureSizeLimit : Int(limitCode) * 16
    let bytes = reader.rest()

    // The sniffer, on several collections of the same bytes.
    let expected = referenceFormat(bytes)
    require(
        PictureFormat.detect(bytes) == expected, "detect(\(bytes.prefix(12))) is not \(String(describing: expected))")
    let padded = Data([0] + bytes)
    require(PictureFormat.detect(padded.dropFirst()) == expected, "detect differs on a Data slice")
    require(PictureFormat.detect(bytes[...]) == expected, "detect differs on an ArraySlice")
    for format in PictureFormat.allCases {
        require(PictureFormat(mimeType: format.mimeType) == format, "\(format)'s MIME type does not read back")
    }
    let text = String(decoding: bytes.prefix(16), as: UTF8.self)
    _ = PictureFormat(mimeType: text)
    _ = PictureFormat(fileExtension: text)
    var numbers = FuzzReader(bytes)
    _ = CoffeePicture.sizeText(Int(numbers.integer()))

    // Memory, file and pipe sources.
    let (fromData, _) = open(.data(Data(bytes)), limit: limit)
    let file = fuzzScratchDirectory.appendingPathComponent("picture")
    let created = FileManager.default.createFile(atPath: file.path, contents: Data(bytes))
    require(created, "cannot write \(file.path)")
    let (fromFile, fileInput) = open(.file(file), limit: limit)
    require(fromFile == fromData, "a file opens as \(fromFile), the same bytes in memory as \(fromData)")
    if let fileInput {
        require(drain(fileInput.blobSource()) == bytes, "the file's bytes are not replayed as they were")
        fileInput.close()
    }
    let handle = pipe(holding: bytes)
    let (fromPipe, pipeInput) = open(.fileHandle(handle, name: "pipe"), limit: limit)
    switch (fromPipe, fromData) {
    case (.input(let format, nil), .input(let expectedFormat, _)):
        require(format == expectedFormat, "a pipe opens as \(format), memory as \(expectedFormat)")
    case (.input(let format, nil), .failure(.tooLarge)):
        // A pipe's size is learnt while it is copied.
        require(format == expected, "a pipe opens as \(format)")
    case (.failure(let reason), .failure(let expectedReason)):
        require(reason == expectedReason, "a pipe fails with \(reason), memory with \(expectedReason)")
    default:
        require(false, "a pipe opens as \(fromPipe), memory as \(fromData)")
    }
    if let pipeInput {
        require(drain(pipeInput.blobSource()) == bytes, "the pipe's bytes are not replayed as they were")
        pipeInput.close()
    }
    try? handle.close()

    // Into the database and back, from memory and from a pipe.
    let (database, id) = setUp
    let store = CoffeeStore(database: database, pictureSizeLimit: limit)
    let copy = fuzzScratchDirectory.appendingPathComponent("copy")
    for useAPipe in [false, true] {
        do {
            _ = try blocking {
                try await CoffeeStore(database: database).setPicture(id: id, from: .data(Data(oldPicture)))
            }
        } catch {
            require(false, "cannot store the old picture: \(error)")
        }
        let source = useAPipe ? pipe(holding: bytes) : nil
        var stored = true
        do {
            let picture: PictureSource = source.map { .fileHandle($0, name: "pipe") } ?? .data(Data(bytes))
            _ = try blocking { try await store.setPicture(id: id, from: picture) }
        } catch let error as PictureError {
            _ = error.description
            stored = false
        } catch {
            require(false, "setPicture threw \(type(of: error)): \(error)")
        }
        try? source?.close()
        let isAcceptable = expected != nil && bytes.count <= limit
        require(stored == isAcceptable, "setPicture stored=\(stored) for \(bytes.count) bytes, limit \(limit)")
        let after = storedBytes(store, id, copy)
        require(after == (stored ? bytes : oldPicture), "the stored picture is neither the new one nor the old one")
        // Pipes are copied to a temporary file first, which must not stay.
        let temporary = FileManager.default.temporaryDirectory
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        require(
            Set(leftovers).isSubset(of: [fuzzScratchDirectory.lastPathComponent]),
            "files left in \(temporary.path): \(leftovers)")
        let scratch = (try? FileManager.default.contentsOfDirectory(atPath: fuzzScratchDirectory.path)) ?? []
        require(Set(scratch).isSubset(of: ["picture", "copy"]), "files left in the scratch directory: \(scratch)")
    }
    return 0
}
