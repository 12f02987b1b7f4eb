package networkpeers

import "kns3.dev/kns3/scheduler/plugins/peers"

// The annotations with which a pod declares its peers (peers.FromAnnotations
// reads them): the pods of its namespace it talks to, as label selectors,
// several separated by ";", and the traffic it expects to exchange with
// them all, in bits per second, optional.
const (
	PeersAnnotation       = peers.PeersAnnotation
	PeerTrafficAnnotation = peers.PeerTrafficAnnotation

	// ReasonInvalidPeers is the reason of the Warning event a pod gets when
	// its declaration cannot be read; it is then scheduled as if it
	// declared no peers.
	ReasonInvalidPeers = "InvalidPeers"
)

// The keys of SignPod's fragments, named as upstream names its own.
const (
	namespaceSignerName   = "v1.Pod.Namespace"
	peersSignerName       = "v1.Pod.Annotations[" + PeersAnnotation + "]"
	trafficSignerName     = "v1.Pod.Annotations[" + PeerTrafficAnnotation + "]"
	appGroupSignerName    = "v1.Pod.Labels[" + AppGroupLabel + "]"
	appWorkloadSignerName = "v1.Pod.Labels[" + AppGroupWorkloadLabel + "]"
)
