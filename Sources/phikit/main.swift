import PhiKit
print("phikit \(PhiKitVersion.string)")
